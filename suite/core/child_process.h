#pragma once
// Starting another program: the one way lrbench does it (sbatch and `lrbench status` from
// `lrbench slurm`, mpirun from `lrbench run --ranks`, gnuplot from the HTML report, the
// launcher's BLAS check). posix_spawn with a fixed argument vector: nothing a child is
// given is ever parsed by a shell. Uses the C and C++ standard libraries only, so the
// static launcher compiles it in (CMakeLists.txt).
#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace lrb {

enum class ChildOutput {
  inherit,         // the child writes where this process does
  capture,         // standard output and error gathered apart (ChildExit::out, ::err)
  capture_merged,  // both gathered into ChildExit::out, in the order written
  to_file,         // both into ChildOptions::output_file (created 0600, truncated)
};

struct ChildOptions {
  std::vector<std::string> argv;  // argv[0]: a path, or a name looked up on PATH
  std::string working_folder;     // empty: this process's
  // Standard input is /dev/null: a child in a background process group that read the
  // terminal would be stopped, and no child of lrbench is meant to be interactive.
  ChildOutput output = ChildOutput::inherit;
  std::string output_file;  // ChildOutput::to_file; relative to working_folder
  // Variables set (a value) or removed (nullopt) in the child's environment only.
  std::vector<std::pair<std::string, std::optional<std::string>>> environment;
  bool own_process_group = false;             // a terminal's Ctrl-C reaches only this process, which decides
  std::size_t capture_limit = std::size_t{64} << 20;  // bytes kept per captured stream; the rest is read and dropped
};

struct ChildExit {
  int exit_code = -1;      // the exit status, -1 when it did not exit by itself
  int signal = 0;          // the signal that ended it (0 if none, or when it timed out)
  bool timed_out = false;  // killed with SIGKILL at the deadline
  std::string out, err;    // what it wrote, where captured

  // The exit status, or 128 + the signal that ended it (the shell's convention).
  int status() const { return exit_code >= 0 ? exit_code : signal > 0 ? 128 + signal : -1; }
};

class ChildProcess {
 public:
  // Starts the program. Where it cannot be started returns nothing and sets *error to the
  // error number (ENOENT: no such program): the caller knows what advice to give.
  static std::optional<ChildProcess> start(const ChildOptions& options, int* error);

  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&&) = delete;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  // A child never waited for is killed and reaped: it never outlives its owner unseen.
  ~ChildProcess();

  pid_t pid() const { return pid_; }

  // Waits until the child ends, gathering what it writes where captured. Once `timeout`
  // has passed it is killed (SIGKILL). While it runs, `tick` is called every 50 ms or so
  // (to forward a stop request, say).
  ChildExit wait(std::optional<std::chrono::milliseconds> timeout = std::nullopt,
                 const std::function<void()>& tick = {});

 private:
  ChildProcess(pid_t pid, int out_fd, int err_fd, std::size_t limit) : pid_(pid), out_fd_(out_fd), err_fd_(err_fd), limit_(limit) {}
  pid_t pid_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  std::size_t limit_ = 0;
};

}  // namespace lrb
