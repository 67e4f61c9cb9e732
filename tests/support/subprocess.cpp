#include "tests/support/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include "suite/core/files.h"
#include "suite/core/sha256.h"

extern char** environ;

namespace lrb::test {

Child::Child(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    // Each child leads its own process group so a test can signal mpirun and its ranks.
    setpgid(0, 0);
    for (const auto& kv : extra_env) putenv(const_cast<char*>(kv.c_str()));
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    std::fprintf(stderr, "exec %s failed: %s\n", args[0], std::strerror(errno));
    _exit(127);
  }
  close(fds[1]);
  fd_ = fds[0];
}

Child::~Child() {
  if (!exited_ && pid_ > 0) {
    kill(-pid_, SIGKILL);
    kill(pid_, SIGKILL);
    waitpid(pid_, &status_, 0);
  }
  if (fd_ >= 0) close(fd_);
}

bool Child::read_some(int timeout_ms) {
  if (fd_ < 0) return false;
  pollfd p{fd_, POLLIN, 0};
  if (poll(&p, 1, timeout_ms) <= 0) return true;
  char buf[4096];
  const ssize_t n = read(fd_, buf, sizeof buf);
  if (n <= 0) {
    close(fd_);
    fd_ = -1;
    return false;
  }
  output_.append(buf, static_cast<std::size_t>(n));
  return true;
}

bool Child::wait_for_output(const std::string& needle, std::chrono::seconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (output_.find(needle) == std::string::npos) {
    if (std::chrono::steady_clock::now() > end) return false;
    if (!read_some(100)) return output_.find(needle) != std::string::npos;
  }
  return true;
}

void Child::signal(int sig) { kill(pid_, sig); }

int Child::wait(std::chrono::seconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (!exited_) {
    read_some(50);
    const pid_t r = waitpid(pid_, &status_, WNOHANG);
    if (r == pid_) {
      exited_ = true;
      break;
    }
    if (std::chrono::steady_clock::now() > end) {
      kill(-pid_, SIGKILL);
      kill(pid_, SIGKILL);
      waitpid(pid_, &status_, 0);
      exited_ = true;
      return -1;
    }
  }
  while (read_some(10)) {
  }
  if (WIFEXITED(status_)) return WEXITSTATUS(status_);
  if (WIFSIGNALED(status_)) return 128 + WTERMSIG(status_);
  return -1;
}

Result run(const std::vector<std::string>& argv, std::chrono::seconds timeout, const std::vector<std::string>& extra_env) {
  Child c(argv, extra_env);
  const int code = c.wait(timeout);
  return {code, c.output()};
}

std::string lrbench() { return LRB_BINARY; }

std::map<int, pid_t> mpi_ranks_of(pid_t mpirun_pid) {
  std::map<int, pid_t> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(e.path() / "stat");
    std::string line;
    std::getline(stat, line);
    const auto close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    char state;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid != mpirun_pid) continue;
    std::error_code ec;
    if (std::filesystem::read_symlink(e.path() / "exe", ec).filename() != "lrbench-core") continue;
    std::ifstream environ(e.path() / "environ");
    std::string var;
    while (std::getline(environ, var, '\0'))
      if (var.rfind("OMPI_COMM_WORLD_RANK=", 0) == 0) out[std::stoi(var.substr(21))] = static_cast<pid_t>(std::stoi(name));
  }
  return out;
}

std::vector<std::string> mpirun(int ranks) {
  return {"mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none", "-np", std::to_string(ranks)};
}

TempDir::TempDir() {
  std::random_device rd;
  const char* base = std::getenv("TMPDIR");
  path_ = std::filesystem::path(base ? base : "/tmp") /
          ("lrb-test-" + std::to_string(getpid()) + "-" + std::to_string(rd()));
  std::filesystem::create_directories(path_);
}

TempDir::~TempDir() {
  if (!std::getenv("LRB_KEEP_TEST_DIRS")) {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
}

void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string file_sha256(const std::filesystem::path& path) { return sha256_hex(read_file(path)); }

}  // namespace lrb::test
