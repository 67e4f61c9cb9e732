#include "suite/mpi/mpirun_launch.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "suite/core/errors.h"
#include "suite/core/exit_codes.h"
#include "suite/core/stop_flag.h"

extern char** environ;

namespace lrb {

int run_under_mpirun(const std::vector<std::string>& mpirun_args) {
  std::vector<std::string> argv = {"mpirun"};
  argv.insert(argv.end(), mpirun_args.begin(), mpirun_args.end());
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // In the background process group a read of the terminal would stop mpirun: no stdin.
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, "mpirun", &actions, &attr, args.data(), environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw UserError(std::string("cannot run mpirun: ") + std::strerror(rc) + " (is Open MPI installed?)");

  bool forwarded = false;
  int status = 0;
  while (true) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) throw EnvironmentError(std::string("waiting for mpirun failed: ") + std::strerror(errno));
    if (stop_requested() && !forwarded) {
      ::kill(pid, SIGUSR1);  // mpirun forwards it: every rank checkpoints and exits 3
      forwarded = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return kExitInternal;  // mpirun itself was killed
}

}  // namespace lrb
