// lrbench, the program users start: it blocks the stop signals (SIGTERM, SIGUSR1, SIGINT)
// and execs lrbench-core from its own folder (or lrbench-results, the same without LibTorch,
// for the commands that only read results). The signal mask and any pending signal survive
// exec, and the program's first code installs its handlers and then unblocks them
// (suite/cli/main.cpp): a signal that arrives while the dynamic loader maps and
// relocates LibTorch stays pending and becomes a stop request (exit 3), not a kill.
// Linked statically, with the C and C++ standard libraries and suite/core/child_process.cpp
// only (no static initialisers of its own), and the signals blocked by its first
// instruction (below, before main): once it runs, a stop signal is never a kill.
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <string>

#include "suite/core/child_process.h"
#include "suite/core/heap_tunables.h"

// A report builds its 100,000 decoded runs as millions of small allocations, whose page
// faults were most of its time; it also grows the heap 64 MiB at a time (5.5 s without, 3.9 s
// with). A training step streams tensors of megabytes through the heap, and 4 KiB pages cost
// it TLB misses: the quickstart's models' one-rank steps 1-10 % shorter with huge pages
// (docs/benchmarks.md, "Results at scale" and "Huge pages for training"). What is set and
// how a user's own value wins: suite/core/heap_tunables.h.
using lrb::back_heap_with_huge_pages;

// report, leaderboard, plan, index, merge, export, compare and ab (which starts the builds
// it compares as programs of their own); status but with --spec (its sweep file is expanded
// with the models' option schemas, which are lrbench-core's). The commands lrbench-results
// is built with (CMakeLists.txt): a command added there is added here.
static bool is_results_command(char** argv) {
  static const char* const results_commands[] = {"report", "leaderboard", "plan", "index", "merge", "export", "compare", "ab"};
  for (const char* command : results_commands)
    if (strcmp(argv[1], command) == 0) return true;
  if (strcmp(argv[1], "status") != 0) return false;
  for (char** a = argv + 2; *a != nullptr; ++a)
    if (strcmp(*a, "--spec") == 0 || strncmp(*a, "--spec=", 7) == 0) return false;
  return true;
}

// ---- The BLAS core -------------------------------------------------------------------
// Debian 12's OpenBLAS 0.3.21 does not know recent processors and falls back to its SSE3
// "Prescott" kernels: matrix products 4-5x slower than the AVX-512 ones the processor has.
// OpenBLAS reads OPENBLAS_CORETYPE when it loads, before lrbench-core's first line runs, so
// the choice is made here: lrbench-blas-check (suite/cli/blas_check.cpp), in a child,
// names the core OpenBLAS chose and a better one; a second child runs the better core
// through products of awkward shapes against a wider reference (older OpenBLAS builds are
// known to compute wrong or crash on processors they do not know). Only a core that passes
// is set; the user's OPENBLAS_CORETYPE is never overridden; LRB_BLAS_AUTO=0 turns it off.
// The verdict is cached per host and library, in $XDG_CACHE_HOME/lrbench (else
// ~/.cache/lrbench)/blas-core-<host>.txt, under a lock so that the ranks of a job starting
// together check once. LRB_BLAS_CORE_CHOICE tells lrbench-core (doctor, provenance) what
// was chosen and why.

static const char kCacheFormat[] = "lrbench-blas-core 1";
static const int kCheckSeconds = 60;  // a check that takes longer is a failed check

struct CheckOutput {
  char text[4096];
  int exit_code;    // -1: killed by a signal or timed out
  int signal;       // the signal that ended it, 0 if none
  int timed_out;
};

// Runs `program [arg]` with OPENBLAS_CORETYPE set to `core` (or unset where core is null),
// its standard output and error gathered, for at most kCheckSeconds.
static void run_check(const char* program, const char* arg, const char* core, CheckOutput* out) {
  memset(out, 0, sizeof *out);
  out->exit_code = -1;
  lrb::ChildOptions options;
  options.argv = {program};
  if (arg != nullptr) options.argv.push_back(arg);
  options.output = lrb::ChildOutput::capture_merged;
  options.capture_limit = sizeof out->text - 1;
  options.environment = {{"OPENBLAS_CORETYPE", core != nullptr ? std::optional<std::string>(core) : std::nullopt}};
  int error = 0;
  auto child = lrb::ChildProcess::start(options, &error);
  if (!child) {
    snprintf(out->text, sizeof out->text, "error=spawn: %s\n", strerror(error));
    return;
  }
  const lrb::ChildExit exit = child->wait(std::chrono::seconds(kCheckSeconds));
  memcpy(out->text, exit.out.data(), exit.out.size());
  out->text[exit.out.size()] = '\0';
  out->exit_code = exit.exit_code;
  out->signal = exit.signal;
  out->timed_out = exit.timed_out ? 1 : 0;
}

// The value of `key=` on its own line of `text`, copied into `value` (empty if absent).
static void field(const char* text, const char* key, char* value, size_t size) {
  value[0] = '\0';
  const size_t key_length = strlen(key);
  for (const char* line = text; line != nullptr && *line != '\0';) {
    const char* end = strchr(line, '\n');
    const size_t length = end ? static_cast<size_t>(end - line) : strlen(line);
    if (length > key_length && strncmp(line, key, key_length) == 0 && line[key_length] == '=') {
      snprintf(value, size, "%.*s", static_cast<int>(length - key_length - 1), line + key_length + 1);
      return;
    }
    line = end ? end + 1 : nullptr;
  }
}

// What identifies the library a verdict was for: the file the loader found, where that
// path leads now, that file's identity and the search path that found it.
static void library_identity(const char* library, const char* canonical, char* out, size_t size) {
  struct stat st;
  char resolved[PATH_MAX];
  if (realpath(library, resolved) == nullptr || strcmp(resolved, canonical) != 0 || stat(canonical, &st) != 0) {
    out[0] = '\0';
    return;
  }
  const char* search = getenv("LD_LIBRARY_PATH");
  snprintf(out, size, "%s -> %s dev=%lu ino=%lu size=%lld mtime=%lld.%09ld ld_library_path=%s", library, canonical,
           static_cast<unsigned long>(st.st_dev), static_cast<unsigned long>(st.st_ino), static_cast<long long>(st.st_size),
           static_cast<long long>(st.st_mtim.tv_sec), st.st_mtim.tv_nsec, search ? search : "");
}

static bool cache_folder(char* out, size_t size) {
  const char* xdg = getenv("XDG_CACHE_HOME");
  const char* home = getenv("HOME");
  if (xdg != nullptr && xdg[0] == '/') {
    snprintf(out, size, "%s", xdg);
  } else if (home != nullptr && home[0] == '/') {
    snprintf(out, size, "%s/.cache", home);
  } else {
    return false;
  }
  mkdir(out, 0755);
  if (strlen(out) + sizeof "/lrbench" >= size) return false;
  strcat(out, "/lrbench");
  mkdir(out, 0755);
  struct stat st;
  return stat(out, &st) == 0 && S_ISDIR(st.st_mode) && access(out, W_OK) == 0;
}

// The verdict cached for this library, if the file holds one: the core to set (maybe
// empty) and the reason.
static bool read_cached(const char* path, const char* identity, char* core, size_t core_size, char* reason, size_t reason_size) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  struct stat st;
  static char text[8192];
  ssize_t n = -1;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < static_cast<off_t>(sizeof text)) n = read(fd, text, sizeof text - 1);
  close(fd);
  if (n <= 0) return false;
  text[n] = '\0';
  char format[64], library[PATH_MAX + 512];
  field(text, "format", format, sizeof format);
  field(text, "library", library, sizeof library);
  field(text, "core", core, core_size);
  field(text, "reason", reason, reason_size);
  // A damaged or foreign file, or one for another library: checked again.
  if (strcmp(format, kCacheFormat) != 0 || strcmp(library, identity) != 0 || reason[0] == '\0') return false;
  for (const char* c = core; *c != '\0'; ++c)
    if (!((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9'))) return false;
  return true;
}

static void write_cached(const char* path, const char* identity, const char* core, const char* reason) {
  char temporary[PATH_MAX + 32];
  snprintf(temporary, sizeof temporary, "%s.%ld.tmp", path, static_cast<long>(getpid()));
  FILE* f = fopen(temporary, "we");
  if (f == nullptr) return;
  const bool written = fprintf(f, "format=%s\nlibrary=%s\ncore=%s\nreason=%s\n", kCacheFormat, identity, core, reason) > 0;
  if (fflush(f) != 0 || fsync(fileno(f)) != 0 || fclose(f) != 0 || !written || rename(temporary, path) != 0) unlink(temporary);
}

// Decides the core (into `core`; empty: leave OpenBLAS's own) and why, from what the check
// found, running its test where OpenBLAS fell back.
static void decide(const char* check, const CheckOutput& found, char* core, size_t core_size, char* reason, size_t reason_size) {
  char canonical[PATH_MAX], natural[64], better[64];
  field(found.text, "canonical", canonical, sizeof canonical);
  field(found.text, "core", natural, sizeof natural);
  field(found.text, "better", better, sizeof better);
  core[0] = '\0';
  if (natural[0] == '\0') {
    snprintf(reason, reason_size, "kept: %.1900s is not OpenBLAS", canonical);
    return;
  }
  if (better[0] == '\0') {
    snprintf(reason, reason_size, "kept: OpenBLAS chose %s, which uses this processor's vector instructions", natural);
    return;
  }
  CheckOutput tested;
  run_check(check, "--test", better, &tested);
  char test[1024], taken[64];
  field(tested.text, "test", test, sizeof test);
  field(tested.text, "core", taken, sizeof taken);
  if (tested.exit_code == 0 && strncmp(test, "ok ", 3) == 0 && strcasecmp(taken, better) == 0) {
    snprintf(core, core_size, "%s", better);
    snprintf(reason, reason_size,
             "auto: OpenBLAS fell back to %s on this processor; %s passed a self-test of matrix products against a "
             "wider reference (%s)",
             natural, better, test + 3);
  } else if (tested.timed_out) {
    snprintf(reason, reason_size, "kept %s: %s failed its self-test: it did not finish in %d s", natural, better, kCheckSeconds);
  } else if (tested.signal != 0) {
    snprintf(reason, reason_size, "kept %s: %s failed its self-test: it crashed (%s)", natural, better, strsignal(tested.signal));
  } else if (strncmp(test, "wrong", 5) == 0) {
    snprintf(reason, reason_size, "kept %s: %s failed its self-test: it computed wrong: %s", natural, better, test + 6);
  } else {
    snprintf(reason, reason_size, "kept %s: OpenBLAS did not take %s (it ran %s)", natural, better, taken[0] ? taken : "nothing");
  }
}

static void choose_blas_core(const char* folder, int folder_length) {
  if (getenv("OPENBLAS_CORETYPE") != nullptr) {
    // Ours, from the lrbench that started this one (--ranks, Slurm), or the user's: kept.
    if (getenv("LRB_BLAS_CORE_CHOICE") == nullptr) setenv("LRB_BLAS_CORE_CHOICE", "user: OPENBLAS_CORETYPE was set before lrbench started", 1);
    return;
  }
  const char* automatic = getenv("LRB_BLAS_AUTO");
  if (automatic != nullptr && strcmp(automatic, "0") == 0) {
    setenv("LRB_BLAS_CORE_CHOICE", "off: LRB_BLAS_AUTO=0, OpenBLAS chooses", 1);
    return;
  }
  static char check[PATH_MAX + 32];
  snprintf(check, sizeof check, "%.*slrbench-blas-check", folder_length, folder);
  if (access(check, X_OK) != 0) {
    setenv("LRB_BLAS_CORE_CHOICE", "none: lrbench-blas-check is not beside lrbench", 1);
    return;
  }
  static char cache[PATH_MAX], lock[PATH_MAX + 8], host[256];
  int lock_fd = -1;
  const bool cached = cache_folder(cache, sizeof cache - 300) && gethostname(host, sizeof host) == 0;
  if (cached) {
    host[sizeof host - 1] = '\0';
    for (char* c = host; *c != '\0'; ++c)
      if (*c == '/') *c = '_';
    const size_t length = strlen(cache);
    snprintf(cache + length, sizeof cache - length, "/blas-core-%.200s.txt", host);
    snprintf(lock, sizeof lock, "%s.lock", cache);
    lock_fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (lock_fd >= 0) while (flock(lock_fd, LOCK_EX) != 0 && errno == EINTR) {
      }
  }
  static char identity[PATH_MAX * 2 + 512], core[64], reason[2048], choice[2304];
  // The cached verdict holds while the library it was for is the one found (the check's
  // first answer costs milliseconds; its test, about a second).
  CheckOutput found;
  run_check(check, nullptr, nullptr, &found);
  char library[PATH_MAX], canonical[PATH_MAX];
  field(found.text, "library", library, sizeof library);
  field(found.text, "canonical", canonical, sizeof canonical);
  if (found.exit_code != 0 || library[0] == '\0') {
    char error[512];
    field(found.text, "error", error, sizeof error);
    snprintf(choice, sizeof choice, "none: the BLAS check found no library (%s)", error[0] ? error : "no answer");
  } else {
    library_identity(library, canonical, identity, sizeof identity);
    if (cached && identity[0] != '\0' && read_cached(cache, identity, core, sizeof core, reason, sizeof reason)) {
      snprintf(choice, sizeof choice, "%s [cached in %s]", reason, cache);
    } else {
      decide(check, found, core, sizeof core, reason, sizeof reason);
      if (cached && identity[0] != '\0') write_cached(cache, identity, core, reason);
      snprintf(choice, sizeof choice, "%s", reason);
    }
  }
  if (lock_fd >= 0) close(lock_fd);
  if (core[0] != '\0') setenv("OPENBLAS_CORETYPE", core, 1);
  setenv("LRB_BLAS_CORE_CHOICE", choice, 1);
}

// The stop signals are blocked by the program's very first instruction, before the C
// library's start-up code (TLS, relocations, processor features: up to a millisecond on a
// loaded machine), during which a stop signal used to kill the launcher. Only a signal that
// arrives while the kernel is still loading the program (no program can catch that one)
// remains a kill. On x86-64 the entry point is ours (CMakeLists.txt links with
// -e lrb_launcher_entry): one rt_sigprocmask system call, then the C library's _start with
// the stack as the kernel left it. Elsewhere .preinit_array does it, after that start-up.
#if defined(__x86_64__)
static_assert(SIGINT == 2 && SIGUSR1 == 10 && SIGTERM == 15, "the entry's signal set is Linux x86-64's");
asm(R"(
  .text
  .globl lrb_launcher_entry
  .type lrb_launcher_entry, @function
lrb_launcher_entry:
  endbr64
  mov $14, %eax                     # rt_sigprocmask(SIG_BLOCK, &set, NULL, 8)
  xor %edi, %edi
  lea lrb_stop_signal_set(%rip), %rsi
  xor %edx, %edx
  mov $8, %r10d
  syscall
  xor %edx, %edx                    # _start takes %rdx as a function for atexit: none
  jmp _start
  .size lrb_launcher_entry, .-lrb_launcher_entry
  .section .rodata
  .balign 8
lrb_stop_signal_set:
  .quad (1 << 1) | (1 << 9) | (1 << 14)   # SIGINT, SIGUSR1, SIGTERM
  .text
)");
#else
static void block_stop_signals(int, char**, char**) {
  sigset_t stops;
  sigemptyset(&stops);
  sigaddset(&stops, SIGTERM);
  sigaddset(&stops, SIGUSR1);
  sigaddset(&stops, SIGINT);
  sigprocmask(SIG_BLOCK, &stops, nullptr);
}
__attribute__((section(".preinit_array"), used)) static void (*const lrb_block_early)(int, char**, char**) = &block_stop_signals;
#endif

int main(int /*argc*/, char** argv) {
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
    back_heap_with_huge_pages("glibc.malloc.hugetlb=1:glibc.malloc.top_pad=67108864");
    static char results[PATH_MAX + 16];
    snprintf(results, sizeof results, "%.*slrbench-results", folder, self);
    execv(results, argv);
    if (errno != ENOENT) {
      fprintf(stderr, "lrbench: cannot run %s: %s\n", results, strerror(errno));
      return 1;
    }
  }
  choose_blas_core(self, folder);
  // Training keeps glibc's heap padding: 64 MiB more per rank is no gain to a step.
  back_heap_with_huge_pages(lrb::kTrainingHeapTunables);
  static char core[PATH_MAX + 16];
  snprintf(core, sizeof core, "%.*slrbench-core", folder, self);
  execv(core, argv);
  fprintf(stderr, "lrbench: cannot run %s: %s (it is built beside lrbench)\n", core, strerror(errno));
  return 1;
}
