#pragma once
// `lrbench run --ranks auto`: how many ranks to start on this machine, with how many
// threads each. Measured (docs/benchmarks.md, "Thread layout"): the quickstart's runs
// finish 1.6-1.8x sooner as one rank per core with one thread each than as one rank with
// a thread per core, because its models' products are too small for threads to
// share well while separate runs share nothing.
#include <cstddef>
#include <string>

#include "suite/sweep/sweep_runner.h"

namespace lrb {

// What one rank per core gained over one rank with a thread per core, measured on the
// quickstart on 2 cores (docs/benchmarks.md, "Thread layout"), as lrbench says it.
inline constexpr const char* kRankPerCoreGain = "1.6-1.8x";

struct RankLayout {
  int ranks = 1;
  int threads = 1;  // per rank
  std::string why;  // one line for the user: the layout and what it was chosen from
};

// One rank per physical core, in whole data-parallel groups of `ranks_per_run`; never more
// groups than runs left (a rank without a run would leave its core idle, where a rank with
// a run uses it as a thread) and at least one group; each rank gets an equal share of the
// `cpus` (hardware threads) as its threads, at least one. With `fixed_threads` > 0 (the
// user's number) every rank runs that many, and the ranks are as many as fit beside them.
RankLayout auto_rank_layout(int physical_cores, int cpus, std::size_t runs_left, int ranks_per_run, int fixed_threads = 0);

// The layout for a sweep and results folder on this machine: the sweep read and validated
// (a UserError as `lrbench run` gives it; a GPU sweep is refused: one rank per GPU is the
// user's count), threads as --threads or the sweep fix them, its runs in `options.shard` without a run file in
// the folder counted as left (a failed run that --retry-failed would redo counts as done:
// that can only give fewer ranks).
RankLayout auto_rank_layout_for(const SweepRunOptions& options);

}  // namespace lrb
