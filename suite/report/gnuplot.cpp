#include "suite/report/gnuplot.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>
#include <vector>

#include "suite/core/errors.h"
#include "suite/core/files.h"

extern char** environ;

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

struct SpawnActions {
  posix_spawn_file_actions_t a;
  SpawnActions() { posix_spawn_file_actions_init(&a); }
  ~SpawnActions() { posix_spawn_file_actions_destroy(&a); }
};

}  // namespace

std::map<std::string, std::string> run_gnuplot(const std::string& script, const std::map<std::string, std::string>& files,
                                               const std::vector<std::string>& outputs, std::chrono::seconds timeout) {
  PrivateTempFolder dir;
  for (const auto& [name, content] : files) {
    LRB_CHECK(!name.empty() && name.find('/') == std::string::npos && name[0] != '.', "gnuplot file names are plain");
    write_plain(dir.path() / name, content);
  }
  write_plain(dir.path() / "plots.gp", script);

  SpawnActions actions;
  // chdir first: the script, its data and its outputs are named relative to the folder.
  if (posix_spawn_file_actions_addchdir_np(&actions.a, dir.path().c_str()) != 0 ||
      posix_spawn_file_actions_addopen(&actions.a, 0, "/dev/null", O_RDONLY, 0) != 0 ||
      posix_spawn_file_actions_addopen(&actions.a, 1, "gnuplot.log", O_WRONLY | O_CREAT | O_TRUNC, 0600) != 0 ||
      posix_spawn_file_actions_adddup2(&actions.a, 1, 2) != 0)
    throw std::runtime_error("cannot prepare to start gnuplot");
  char arg0[] = "gnuplot", arg1[] = "--default-settings", arg2[] = "plots.gp";
  char* argv[] = {arg0, arg1, arg2, nullptr};
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, "gnuplot", &actions.a, nullptr, argv, environ);
  if (rc == ENOENT)
    throw UserError("gnuplot is not installed (not found on PATH); the HTML report draws its plots with it: run "
                    "scripts/setup.sh (Debian package gnuplot-nox), or choose another --format");
  if (rc != 0) throw std::runtime_error(std::string("cannot start gnuplot: ") + std::strerror(rc));

  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  for (;;) {
    const pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) throw std::runtime_error(std::string("waiting for gnuplot: ") + std::strerror(errno));
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      throw std::runtime_error("gnuplot ran longer than " + std::to_string(timeout.count()) + " s and was stopped");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::string log;
  if (std::filesystem::exists(dir.path() / "gnuplot.log")) log = read_file(dir.path() / "gnuplot.log");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
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
