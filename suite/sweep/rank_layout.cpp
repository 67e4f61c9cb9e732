#include "suite/sweep/rank_layout.h"

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>

#include "suite/config/expand.h"
#include "suite/config/shard.h"
#include "suite/config/sweep_spec.h"
#include "suite/core/environment.h"
#include "suite/core/errors.h"
#include "suite/store/results_layout.h"
#include "suite/sweep/run_selection.h"

namespace lrb {

RankLayout auto_rank_layout(int physical_cores, int cpus, std::size_t runs_left, int ranks_per_run, int fixed_threads) {
  physical_cores = std::max(1, physical_cores);
  cpus = std::max(1, cpus);
  const int group = std::max(1, ranks_per_run);
  const int rank_slots = fixed_threads > 0 ? std::min(physical_cores, cpus / fixed_threads) : physical_cores;
  const std::size_t groups_that_fit = static_cast<std::size_t>(std::max(0, rank_slots) / group);
  const int groups = static_cast<int>(std::max<std::size_t>(1, std::min(groups_that_fit, runs_left)));
  RankLayout layout;
  layout.ranks = groups * group;
  layout.threads = fixed_threads > 0 ? fixed_threads : std::max(1, cpus / layout.ranks);
  layout.why = fmt::format("{} rank(s) x {} thread(s): {} core(s), {} hardware thread(s), {} run(s) left", layout.ranks,
                           layout.threads, physical_cores, cpus, runs_left);
  if (group > 1) layout.why += fmt::format(", {} rank(s) per run", group);
  return layout;
}

RankLayout auto_rank_layout_for(const SweepRunOptions& options) {
  const SweepSpec spec = load_sweep_file(options.spec_file);
  if (spec.sweep.device != "cpu")
    throw UserError(fmt::format("{}: device = \"{}\": --ranks auto lays out CPU cores; give --ranks N, one rank per GPU",
                                spec.file, spec.sweep.device));
  const ExpandedSweep ex = expand_sweep(spec);
  const ResultsLayout folder(options.out_dir);
  std::size_t left = 0;
  for (const std::size_t i : selected_runs(ex.runs, options.shard, options.only, spec.sweep.sequential.has_value())) {
    std::error_code ec;
    if (!std::filesystem::exists(folder.run_file(ex.runs[i].key), ec)) ++left;
  }
  const int fixed_threads = options.threads >= 0 ? options.threads : spec.sweep.threads;  // 0: auto
  return auto_rank_layout(available_physical_cores(), available_cores(), left, spec.sweep.ranks_per_run, fixed_threads);
}

}  // namespace lrb
