#pragma once
// Running gnuplot without a shell: a fixed argv (`gnuplot --default-settings plots.gp`,
// found on PATH), started with posix_spawn in a private temporary folder that holds the
// script and its data files, stdin from /dev/null, output to a log in that folder. Nothing
// from a results file reaches the command line; labels reach the script only through
// gnuplot_label (escape.h).
#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace lrb {

// A folder only this process uses (mkdtemp, mode 0700), removed with its contents at destruction.
class PrivateTempFolder {
 public:
  PrivateTempFolder();
  ~PrivateTempFolder();
  PrivateTempFolder(const PrivateTempFolder&) = delete;
  PrivateTempFolder& operator=(const PrivateTempFolder&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Writes `files` (name -> content; plain names, no '/') into a private folder, runs the
// script `script` there, and returns the files named in `outputs` (name -> content).
// UserError when gnuplot is not installed; std::runtime_error (with gnuplot's messages)
// when it fails or runs past `timeout`.
std::map<std::string, std::string> run_gnuplot(const std::string& script, const std::map<std::string, std::string>& files,
                                               const std::vector<std::string>& outputs,
                                               std::chrono::seconds timeout = std::chrono::seconds(120));

}  // namespace lrb
