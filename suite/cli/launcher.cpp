// lrbench, the program users start: it blocks the stop signals (SIGTERM, SIGUSR1, SIGINT)
// and execs lrbench-core from its own folder (or lrbench-results, the same without LibTorch,
// for the commands that only read results). The signal mask and any pending signal survive
// exec, and the program's first code installs its handlers and then unblocks them
// (suite/cli/main.cpp): a signal that arrives while the dynamic loader maps and
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

// A report builds its 100,000 decoded runs as millions of small allocations; most of that
// time went to page faults. glibc's allocator, told to, backs its heap with transparent huge
// pages (where the system allows them: "madvise" or "always") and grows it 64 MiB at a time
// (a report of 100,000 runs here: 5.5 s without, 3.9 s with; docs/benchmarks.md, "Results at scale").
// GLIBC_TUNABLES the user set come after, so theirs win.
static void allocate_for_many_records() {
  static const char ours[] = "glibc.malloc.hugetlb=1:glibc.malloc.top_pad=67108864";
  const char* theirs = getenv("GLIBC_TUNABLES");
  static char tunables[4096];
  if (theirs == nullptr || theirs[0] == '\0')
    snprintf(tunables, sizeof tunables, "%s", ours);
  else if (snprintf(tunables, sizeof tunables, "%s:%s", ours, theirs) >= static_cast<int>(sizeof tunables))
    return;  // too long to extend: theirs alone
  setenv("GLIBC_TUNABLES", tunables, 1);
}

// report, leaderboard, plan, index and merge; status but with --spec (its sweep file is expanded
// with the models' option schemas, which are lrbench-core's). The commands lrbench-results
// is built with (CMakeLists.txt): a command added there is added here.
static bool is_results_command(char** argv) {
  static const char* const results_commands[] = {"report", "leaderboard", "plan", "index", "merge"};
  for (const char* command : results_commands)
    if (strcmp(argv[1], command) == 0) return true;
  if (strcmp(argv[1], "status") != 0) return false;
  for (char** a = argv + 2; *a != nullptr; ++a)
    if (strcmp(*a, "--spec") == 0 || strncmp(*a, "--spec=", 7) == 0) return false;
  return true;
}

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
  const char* slash = strrchr(self, '/');
  const int folder = slash ? static_cast<int>(slash - self + 1) : 0;
  // What scripts that start lrbench again (lrbench slurm, --ranks) should run: this launcher.
  setenv("LRB_EXECUTABLE", self, 1);
  // These commands read results and never LibTorch, whose loading takes most of a second.
  // A program built with lrbench_add_program has no lrbench-results: lrbench-core does all.
  if (argv[1] != nullptr && is_results_command(argv)) {
    allocate_for_many_records();
    static char results[PATH_MAX + 16];
    snprintf(results, sizeof results, "%.*slrbench-results", folder, self);
    execv(results, argv);
    if (errno != ENOENT) {
      fprintf(stderr, "lrbench: cannot run %s: %s\n", results, strerror(errno));
      return 1;
    }
  }
  static char core[PATH_MAX + 16];
  snprintf(core, sizeof core, "%.*slrbench-core", folder, self);
  execv(core, argv);
  fprintf(stderr, "lrbench: cannot run %s: %s (it is built beside lrbench)\n", core, strerror(errno));
  return 1;
}
