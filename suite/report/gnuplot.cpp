#include "suite/report/gnuplot.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <vector>

#include "suite/core/child_process.h"
#include "suite/core/errors.h"
#include "suite/core/files.h"

namespace lrb {

PrivateTempFolder::PrivateTempFolder() {
  std::filesystem::path base = std::filesystem::temp_directory_path();
  std::string pattern = (base / "lrbench-plots-XXXXXX").string();
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr)
    throw UserError("cannot create a temporary folder under " + base.string() + ": " + std::strerror(errno) +
                    "; set TMPDIR to a writable folder");
  path_ = buf.data();
}

PrivateTempFolder::~PrivateTempFolder() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

namespace {

void write_plain(const std::filesystem::path& p, const std::string& content) {
  std::ofstream f(p, std::ios::binary);
  f << content;
  if (!f) throw std::runtime_error("cannot write " + p.string());
}

}  // namespace

std::map<std::string, std::string> run_gnuplot(const std::string& script, const std::map<std::string, std::string>& files,
                                               const std::vector<std::string>& outputs, std::chrono::seconds timeout) {
  PrivateTempFolder dir;
  for (const auto& [name, content] : files) {
    LRB_CHECK(!name.empty() && name.find('/') == std::string::npos && name[0] != '.', "gnuplot file names are plain");
    write_plain(dir.path() / name, content);
  }
  write_plain(dir.path() / "plots.gp", script);

  ChildOptions options;
  options.argv = {"gnuplot", "--default-settings", "plots.gp"};
  options.working_folder = dir.path().string();  // the script, its data and its outputs are named relative to it
  options.output = ChildOutput::to_file;
  options.output_file = "gnuplot.log";
  int error = 0;
  auto gnuplot = ChildProcess::start(options, &error);
  if (!gnuplot && error == ENOENT)
    throw UserError("gnuplot is not installed (not found on PATH); the HTML report draws its plots with it: run "
                    "scripts/setup.sh (Debian package gnuplot-nox), or choose another --format");
  if (!gnuplot) throw std::runtime_error(std::string("cannot start gnuplot: ") + std::strerror(error));
  const ChildExit exit = gnuplot->wait(std::chrono::duration_cast<std::chrono::milliseconds>(timeout));
  if (exit.timed_out)
    throw std::runtime_error("gnuplot ran longer than " + std::to_string(timeout.count()) + " s and was stopped");
  std::string log;
  if (std::filesystem::exists(dir.path() / "gnuplot.log")) log = read_file(dir.path() / "gnuplot.log");
  if (exit.status() != 0)
    throw std::runtime_error("gnuplot failed drawing the report's plots (a bug in lrbench's plot scripts): " + log);
  std::map<std::string, std::string> out;
  for (const auto& name : outputs) {
    const auto p = dir.path() / name;
    if (!std::filesystem::exists(p)) throw std::runtime_error("gnuplot wrote no " + name + ": " + log);
    out[name] = read_file(p);
  }
  return out;
}

}  // namespace lrb
