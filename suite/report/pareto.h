#pragma once
// Accuracy–cost fronts, one per task: every cell of the task, across its conditions (a model
// at three FLOP budgets is three points), placed by its mean metric and its mean cost, each
// with its t interval (an exact cost: a point, said so). A cell is on the front when no
// other cell is at least as good on the metric and at most as costly, better on one (by
// the means; equal means on both axes dominate nothing). Each cell off the front names the
// cell that dominates it, with the paired evidence over the seeds both ran: Δ metric with
// its t interval, and the cost ratio with Fieller's interval (or exactly), and whether the
// domination is clear (both intervals on the dominating side) or only in the means.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "suite/stats/sample_stats.h"

namespace lrb {

struct Analysis;

// One axis of a cell: its values' mean and t interval.
struct AxisSummary {
  std::size_t n = 0;
  std::optional<double> mean;
  std::optional<stats::Interval> ci;  // t interval; a point for an exact figure; none for n = 1
  bool exact = false;                 // a deterministic count, equal on every seed read
  bool budget = false;                // training FLOPs placed at the runs' FLOP budget
};

// Why a cell lies off the front: the cell that dominates it, and the paired evidence.
struct Domination {
  std::size_t by = 0;                        // the dominating cell (index into Analysis::cells)
  std::vector<std::int64_t> seeds;           // paired: both cells have the metric and the cost there
  std::optional<double> delta;               // mean of metric(by) − metric(cell) over the seeds
  std::optional<stats::Interval> delta_ci;   // t interval (n ≥ 2)
  std::optional<double> ratio;               // mean cost(by) / mean cost(cell) over the seeds
  std::optional<stats::Interval> ratio_ci;   // Fieller's, or a point for exact costs
  bool ratio_exact = false;
  bool clear = false;   // both intervals on the dominating side (an exact equal cost counts as not worse)
  std::string reading;  // "clear", or why only in the means
};

struct FrontPoint {
  std::size_t cell = 0;
  AxisSummary metric, cost;
  bool placed = false;  // both means defined
  std::string why_not_placed;
  bool on_front = false;
  std::optional<Domination> dominated_by;
};

struct TaskFront {
  std::string task;
  std::string metric;  // stored name
  bool higher_is_better = true;
  std::string cost;    // stored name: train_flops, peak_step_bytes, step_seconds_median, params
  std::string cost_choice;  // how it was chosen: "--cost flops", "default: ..."
  double confidence = 0.95;
  std::vector<FrontPoint> points;  // every cell of the task, in the tables' order
};

// The fronts of every task with at least two cells placed, on ReportOptions::cost (a name of
// cost_figure_names(), "" for each task's default: flops where its cells record train_flops,
// else params). A requested cost that a task's cells do not record: a warning, no front.
std::vector<TaskFront> pareto_fronts(const Analysis& a, std::vector<std::string>& warnings);

// results/REPORT_SCHEMA.md, "front".
nlohmann::json fronts_json(const Analysis& a);

}  // namespace lrb
