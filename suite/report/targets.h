#pragma once
// Cost to a target: per cell whose runs have one (train.target), how many runs reached it,
// the share with Wilson's interval (and the exact Clopper–Pearson one), and the median cost
// to reach it (steps, model FLOPs, training seconds) over every finished run, a run that
// never reached it counted as never (AlgoPerf's rule: the median is "not reached" when half
// or more never reached it; never a large number in its place). A failed run never reached
// it; a stopped run has not finished and is counted apart, outside the share.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "suite/stats/sample_stats.h"

namespace lrb {

struct Analysis;
struct Cell;

struct TargetSummary {
  std::size_t cell = 0;  // index into Analysis::cells
  std::size_t runs = 0, finished = 0, reached = 0, failed = 0, stopped = 0;
  std::optional<double> share;  // reached / finished
  std::optional<stats::Interval> wilson, clopper_pearson;
  bool median_reached = false;  // fewer than half the finished runs never reached it
  // Undefined where not reached, and where a run that reached it did not record the figure
  // (FLOPs a model cannot count).
  std::optional<double> median_steps, median_flops, median_seconds;
};

// The target runs of one cell (Analysis::targets holds one per cell that has them).
TargetSummary summarise_target(const Cell& cell, std::size_t index, double confidence);

// The median of `cost` ("steps", "flops", "seconds").
const std::optional<double>& median_cost(const TargetSummary& t, const std::string& cost);

// results/REPORT_SCHEMA.md, "target".
nlohmann::json targets_json(const Analysis& a);

}  // namespace lrb
