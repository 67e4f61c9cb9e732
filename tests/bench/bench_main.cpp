// lrb_bench's main: Google Benchmark's, in a process whose heap is backed as lrbench-core's
// is (glibc.malloc.hugetlb=1, which the launcher sets before it execs lrbench-core). Without
// it the kernels' large tensors paid page faults a run does not: the full softmax at N = 4096
// ran 1.8× slower on a 2-core Zen 5 VM (docs/benchmarks.md, "Kernels against the matrix
// product"). glibc reads its tunables at start, so this execs itself once with them set; a
// GLIBC_TUNABLES of the user's own comes after and wins (glibc.malloc.hugetlb=0 turns it off).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "suite/core/heap_tunables.h"

int main(int argc, char** argv) {
  if (lrb::back_heap_with_huge_pages(lrb::kTrainingHeapTunables)) {
    execv("/proc/self/exe", argv);
    std::fprintf(stderr, "lrb_bench: cannot restart with GLIBC_TUNABLES set (%s); runs without\n",
                 std::strerror(errno));
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
