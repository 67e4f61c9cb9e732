// Cost of the statistics a report computes per cell and per comparison.
#include <benchmark/benchmark.h>

#include "suite/stats/describe.h"
#include "suite/stats/paired.h"
#include "suite/stats/ranking.h"

namespace {

const std::vector<double> kTen{0.71, 0.74, 0.69, 0.77, 0.73, 0.70, 0.72, 0.75, 0.68, 0.76};

// Target: 10,000 resamples of 10 values well under 10 ms.
void BM_StatsBootstrap10k(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(lrb::stats::bootstrap_mean(kTen));
}
BENCHMARK(BM_StatsBootstrap10k)->Unit(benchmark::kMillisecond);

void BM_StatsDescribe(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(lrb::stats::describe(kTen));
}
BENCHMARK(BM_StatsDescribe)->Unit(benchmark::kMillisecond);

void BM_StatsComparePaired(benchmark::State& state) {
  lrb::stats::SeedValues a, b;
  for (int s = 0; s < 10; ++s) {
    a[s] = kTen[s] + 0.01 * (s % 3);
    b[s] = kTen[s];
  }
  for (auto _ : state) benchmark::DoNotOptimize(lrb::stats::compare_paired(a, b));
}
BENCHMARK(BM_StatsComparePaired)->Unit(benchmark::kMillisecond);

// 10 tasks × 8 models × 5 seeds, 10,000 replicates.
void BM_StatsRankAcrossTasks(benchmark::State& state) {
  std::vector<lrb::stats::TaskScores> tasks;
  for (int t = 0; t < 10; ++t) {
    lrb::stats::TaskScores ts{"task" + std::to_string(t), {}};
    for (int m = 0; m < 8; ++m) {
      for (int s = 0; s < 5; ++s) ts.models["model" + std::to_string(m)][s] = 0.5 + 0.01 * m + 0.013 * ((s * 7 + t * 3 + m) % 5);
    }
    tasks.push_back(ts);
  }
  for (auto _ : state) benchmark::DoNotOptimize(lrb::stats::rank_across_tasks(tasks));
}
BENCHMARK(BM_StatsRankAcrossTasks)->Unit(benchmark::kMillisecond);

}  // namespace
