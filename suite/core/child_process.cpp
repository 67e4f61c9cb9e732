#include "suite/core/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

extern char** environ;

namespace lrb {

namespace {

// posix_spawn's file actions and attributes, released on every path.
struct SpawnSetup {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attributes;
  SpawnSetup() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attributes);
  }
  ~SpawnSetup() {
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
  }
};

struct Pipe {
  int read_end = -1, write_end = -1;
  ~Pipe() { close_both(); }
  bool open() {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return false;
    read_end = fds[0];
    write_end = fds[1];
    return true;
  }
  void close_both() {
    if (read_end >= 0) ::close(read_end);
    if (write_end >= 0) ::close(write_end);
    read_end = write_end = -1;
  }
  int take_read_end() {
    const int fd = read_end;
    read_end = -1;
    return fd;
  }
};

// This process's environment with the options' changes applied: "NAME=value" strings.
std::vector<std::string> child_environment(const ChildOptions& options) {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    const bool changed = std::any_of(options.environment.begin(), options.environment.end(),
                                     [&](const auto& change) { return change.first == name; });
    if (!changed) env.push_back(entry);
  }
  for (const auto& [name, value] : options.environment)
    if (value) env.push_back(name + "=" + *value);
  return env;
}

// Reads what is ready on *fd into `sink` (up to `limit` bytes kept); closes it at its end.
void drain(int* fd, std::string* sink, std::size_t limit) {
  char buffer[8192];
  const ssize_t n = ::read(*fd, buffer, sizeof buffer);
  if (n > 0) {
    if (sink->size() < limit) sink->append(buffer, std::min(static_cast<std::size_t>(n), limit - sink->size()));
    return;
  }
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  ::close(*fd);
  *fd = -1;
}

}  // namespace

std::optional<ChildProcess> ChildProcess::start(const ChildOptions& options, int* error) {
  *error = 0;
  if (options.argv.empty()) {
    *error = EINVAL;
    return std::nullopt;
  }
  SpawnSetup setup;
  Pipe out_pipe, err_pipe;
  const bool capture = options.output == ChildOutput::capture || options.output == ChildOutput::capture_merged;
  if (capture && (!out_pipe.open() || (options.output == ChildOutput::capture && !err_pipe.open()))) {
    *error = errno;
    return std::nullopt;
  }
  int rc = 0;
  // chdir first: an output file is named relative to the working folder.
  if (!options.working_folder.empty())
    rc = rc ? rc : posix_spawn_file_actions_addchdir_np(&setup.actions, options.working_folder.c_str());
  rc = rc ? rc : posix_spawn_file_actions_addopen(&setup.actions, 0, "/dev/null", O_RDONLY, 0);
  if (capture) {
    rc = rc ? rc : posix_spawn_file_actions_adddup2(&setup.actions, out_pipe.write_end, 1);
    const int err_target = options.output == ChildOutput::capture ? err_pipe.write_end : out_pipe.write_end;
    rc = rc ? rc : posix_spawn_file_actions_adddup2(&setup.actions, err_target, 2);
  } else if (options.output == ChildOutput::to_file) {
    rc = rc ? rc : posix_spawn_file_actions_addopen(&setup.actions, 1, options.output_file.c_str(),
                                                    O_WRONLY | O_CREAT | O_TRUNC, 0600);
    rc = rc ? rc : posix_spawn_file_actions_adddup2(&setup.actions, 1, 2);
  }
  if (options.own_process_group) {
    rc = rc ? rc : posix_spawnattr_setflags(&setup.attributes, POSIX_SPAWN_SETPGROUP);
    rc = rc ? rc : posix_spawnattr_setpgroup(&setup.attributes, 0);
  }
  if (rc != 0) {
    *error = rc;
    return std::nullopt;
  }
  std::vector<char*> argv;
  for (const auto& a : options.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_strings = child_environment(options);
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = -1;
  rc = posix_spawnp(&pid, argv[0], &setup.actions, &setup.attributes, argv.data(), envp.data());
  if (rc != 0) {
    *error = rc;
    return std::nullopt;
  }
  // The write ends are the child's now: this process keeps only the read ends, so that
  // the child's exit ends the streams.
  const int out_fd = out_pipe.take_read_end();
  const int err_fd = err_pipe.take_read_end();
  out_pipe.close_both();
  err_pipe.close_both();
  return ChildProcess(pid, out_fd, err_fd, options.capture_limit);
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(other.pid_), out_fd_(other.out_fd_), err_fd_(other.err_fd_), limit_(other.limit_) {
  other.pid_ = -1;
  other.out_fd_ = other.err_fd_ = -1;
}

ChildProcess::~ChildProcess() {
  if (out_fd_ >= 0) ::close(out_fd_);
  if (err_fd_ >= 0) ::close(err_fd_);
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
}

ChildExit ChildProcess::wait(std::optional<std::chrono::milliseconds> timeout, const std::function<void()>& tick) {
  using Clock = std::chrono::steady_clock;
  ChildExit result;
  const auto started = Clock::now();
  auto next_tick = started + std::chrono::milliseconds(50);
  auto idle_sleep = std::chrono::milliseconds(1);
  int status = 0;
  for (;;) {
    if (timeout && Clock::now() - started >= *timeout) {
      ::kill(pid_, SIGKILL);
      result.timed_out = true;
      // A grandchild may hold the streams open: stop reading them.
      if (out_fd_ >= 0) ::close(out_fd_);
      if (err_fd_ >= 0) ::close(err_fd_);
      out_fd_ = err_fd_ = -1;
      while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
      break;
    }
    if (out_fd_ >= 0 || err_fd_ >= 0) {
      pollfd fds[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
      const int ready = ::poll(fds, 2, 50);
      if (ready > 0) {
        if (fds[0].fd >= 0 && (fds[0].revents & (POLLIN | POLLHUP | POLLERR))) drain(&out_fd_, &result.out, limit_);
        if (fds[1].fd >= 0 && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) drain(&err_fd_, &result.err, limit_);
      }
    } else {
      const pid_t done = ::waitpid(pid_, &status, WNOHANG);
      if (done == pid_) break;
      if (done < 0 && errno != EINTR) {  // reaped elsewhere (SIGCHLD ignored): its status is lost
        pid_ = -1;
        return result;
      }
      std::this_thread::sleep_for(idle_sleep);
      idle_sleep = std::min(idle_sleep * 2, std::chrono::milliseconds(50));
    }
    if (tick && Clock::now() >= next_tick) {
      tick();
      next_tick = Clock::now() + std::chrono::milliseconds(50);
    }
  }
  pid_ = -1;
  if (!result.timed_out) {
    if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  }
  return result;
}

}  // namespace lrb
