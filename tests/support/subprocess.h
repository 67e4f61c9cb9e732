#pragma once
// Test support: start lrbench (or mpirun) as a child process, read its output as it comes,
// signal it, wait with a timeout. Tests of stop/resume and crash recovery need real
// processes and real signals.
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace lrb::test {

class Child {
 public:
  // argv[0] is the program path; stdout and stderr are merged into one pipe.
  explicit Child(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env = {});
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }
  // Reads output until `needle` appears (true) or the child ends / the timeout passes (false).
  bool wait_for_output(const std::string& needle, std::chrono::seconds timeout);
  void signal(int sig);
  // Waits for exit; returns the exit code, 128+signal if killed, -1 on timeout (then kills).
  int wait(std::chrono::seconds timeout);
  const std::string& output() const { return output_; }

 private:
  bool read_some(int timeout_ms);
  pid_t pid_ = -1;
  int fd_ = -1;
  int status_ = 0;
  bool exited_ = false;
  std::string output_;
};

struct Result {
  int code;
  std::string output;
};
// Runs to completion (timeout kills it and fails the calling test through the code -1).
Result run(const std::vector<std::string>& argv, std::chrono::seconds timeout = std::chrono::seconds(600),
           const std::vector<std::string>& extra_env = {});

std::string lrbench();  // path of the built lrbench binary
// The lrbench processes mpirun `mpirun_pid` started, by MPI world rank (from each one's
// OMPI_COMM_WORLD_RANK): a test kills or signals one rank of a job.
std::map<int, pid_t> mpi_ranks_of(pid_t mpirun_pid);
std::vector<std::string> mpirun(int ranks);  // mpirun prefix with the flags this machine needs

// A fresh folder under the build's temporary space, removed at destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

void write_text(const std::filesystem::path& path, const std::string& text);
// The file's text; "" when it cannot be read (a job's log not written yet).
std::string read_text(const std::filesystem::path& path);
std::string file_sha256(const std::filesystem::path& path);

}  // namespace lrb::test
