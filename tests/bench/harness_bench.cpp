// Harness overhead per run: a run with zero training steps, from its RunSpec to its
// published run file (data, model construction, final evaluation, HDF5 publish).
// Target: <= 100 ms per run (docs/benchmarks.md, "Harness"). Run: build/tests/lrb_bench --benchmark_filter=Harness
// Also: the cost of one lap of the step-phase clock (suite/run/step_phases.h).
#include <benchmark/benchmark.h>

#include <ATen/Parallel.h>
#include <unistd.h>

#include <filesystem>

#include "suite/config/expand.h"
#include "suite/config/sweep_spec.h"
#include "suite/run/data_cache.h"
#include "suite/run/runner.h"
#include "suite/run/step_phases.h"
#include "suite/runtime/counting_allocator.h"

namespace lrb {
namespace {

ExpandedSweep zero_step_sweep() {
  return expand_sweep(parse_sweep(R"(
[sweep]
name = "overhead"
seeds = 1
[train]
steps = 0
warmup_steps = 0
eval_size = 64
batch_size = 32
[[task]]
name = "listops"
seq_len = 128
train_size = 256
[[model]]
name = "transformer"
dim = 64
depth = 2
heads = 4
)", "overhead.toml"));
}

void run_overhead(benchmark::State& state, bool cold_data) {
  CpuMemoryCounter::install();
  at::set_num_threads(1);
  const auto ex = zero_step_sweep();
  const auto dir = std::filesystem::temp_directory_path() / ("lrb-bench-overhead-" + std::to_string(::getpid()));
  RunContext ctx;
  ctx.results_dir = dir;
  ctx.threads = 1;
  for (auto _ : state) {
    if (cold_data) clear_task_data_cache();
    const RunOutcome out = execute_run(ex.runs[0], ctx);
    if (out.status != RunStatus::Ok) state.SkipWithError(out.error.c_str());
  }
  std::filesystem::remove_all(dir);
}

void BM_HarnessOverheadPerRun_WarmData(benchmark::State& state) { run_overhead(state, false); }
void BM_HarnessOverheadPerRun_ColdData(benchmark::State& state) { run_overhead(state, true); }
BENCHMARK(BM_HarnessOverheadPerRun_WarmData)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_HarnessOverheadPerRun_ColdData)->Unit(benchmark::kMillisecond)->MinTime(2.0);

// What the step breakdown costs on a CPU: one lap per phase boundary, five a step
// (docs/benchmarks.md, "Where a step goes": against a step of milliseconds).
void BM_HarnessStepPhaseLap(benchmark::State& state) {
  PhaseClock clock(at::Device(at::kCPU));
  for (auto _ : state) benchmark::DoNotOptimize(clock.lap());
}
BENCHMARK(BM_HarnessStepPhaseLap);

}  // namespace
}  // namespace lrb
