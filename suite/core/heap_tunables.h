#pragma once
// glibc's allocator, told to, backs its heap with transparent huge pages (where the system
// allows them: "madvise" or "always"; Debian's default is "madvise", which glibc does not
// use unless told). glibc reads its tunables when the process starts, so a program that
// wants them sets GLIBC_TUNABLES and execs (the launcher, suite/cli/launcher.cpp; the
// benchmarks, tests/bench/bench_main.cpp). libc only: the launcher links nothing else.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

namespace lrb {

// What lrbench-core trains with (docs/benchmarks.md, "Huge pages for training").
constexpr const char* kTrainingHeapTunables = "glibc.malloc.hugetlb=1";

// Puts `ours` first in GLIBC_TUNABLES: GLIBC_TUNABLES the user set come after ours, so
// theirs win; a value that starts with ours came from the lrbench that started this one
// (--ranks, Slurm) and is kept as it is. Returns whether it changed the environment (a
// program execs then for glibc to read it).
inline bool back_heap_with_huge_pages(const char* ours) {
  const char* theirs = getenv("GLIBC_TUNABLES");
  static char tunables[4096];
  if (theirs == nullptr || theirs[0] == '\0')
    snprintf(tunables, sizeof tunables, "%s", ours);
  else if (strncmp(theirs, ours, strlen(ours)) == 0)
    return false;
  else if (snprintf(tunables, sizeof tunables, "%s:%s", ours, theirs) >= static_cast<int>(sizeof tunables))
    return false;  // too long to extend: theirs alone
  return setenv("GLIBC_TUNABLES", tunables, 1) == 0;
}

}  // namespace lrb
