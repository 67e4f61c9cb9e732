// lrbench, the program users start: it blocks the stop signals (SIGTERM, SIGUSR1, SIGINT)
// and execs lrbench-core from its own folder. The signal mask and any pending signal
// survive exec, and lrbench-core's first code installs its handlers and then unblocks
// them (suite/cli/main.cpp): a signal that arrives while the dynamic loader maps and
// relocates LibTorch stays pending and becomes a stop request (exit 3), not a kill.
// Linked statically and with the C library only, so that nothing runs before main: from
// the exec on, a stop signal is never a kill.
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int /*argc*/, char** argv) {
  sigset_t stops;
  sigemptyset(&stops);
  sigaddset(&stops, SIGTERM);
  sigaddset(&stops, SIGUSR1);
  sigaddset(&stops, SIGINT);
  sigprocmask(SIG_BLOCK, &stops, nullptr);

  static char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) {
    fprintf(stderr, "lrbench: cannot find its own path (/proc/self/exe): %s\n", strerror(errno));
    return 1;
  }
  self[n] = '\0';
  static char core[PATH_MAX + 16];
  const char* slash = strrchr(self, '/');
  snprintf(core, sizeof core, "%.*slrbench-core", slash ? static_cast<int>(slash - self + 1) : 0, self);
  // What scripts that start lrbench again (lrbench slurm, --ranks) should run: this launcher.
  setenv("LRB_EXECUTABLE", self, 1);
  execv(core, argv);
  fprintf(stderr, "lrbench: cannot run %s: %s (it is built beside lrbench)\n", core, strerror(errno));
  return 1;
}
