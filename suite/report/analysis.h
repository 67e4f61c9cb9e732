#pragma once
// Everything a report says, computed once: per-cell summaries over seeds, paired
// comparisons with adjusted p-values, tie-group rankings per (task, condition), the ranking
// across tasks, efficiency medians, scaling fits, and the warnings. Tables (report_tables.h)
// and the JSON document (report_json.h) are two views of one Analysis.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "suite/report/cells.h"
#include "suite/report/claims/claims.h"
#include "suite/report/cost_to_target.h"
#include "suite/report/pareto.h"
#include "suite/report/claims/sequential_claims.h"
#include "suite/report/claims/study_plan.h"
#include "suite/report/report_input.h"
#include "suite/report/targets.h"
#include "suite/report/variance_sources.h"
#include "suite/report/variants.h"
#include "suite/stats/describe.h"
#include "suite/stats/multiple_testing.h"
#include "suite/stats/paired.h"
#include "suite/stats/ranking.h"
#include "suite/stats/scaling_fit.h"

namespace lrb {

struct ReportOptions {
  std::string metric;    // "" = each task's primary metric
  std::string baseline;  // an entrant ("transformer attention=softmax") or a model name; "" = all pairs
  stats::Correction correction = stats::Correction::kHolm;  // the adjusted p a table shows and marks by
  double alpha = 0.05;
  stats::BootstrapSettings bootstrap;  // cells, paired differences and the across-task ranking
  // How an inconclusive claim of a fixed-design pilot is planned (study_plan.h): as the first
  // look of a sequential design with waves of `plan_step` seeds (0: the pilot's own count)
  // up to `plan_max`. A sequential study is planned with its own design.
  std::int64_t plan_max = 60;
  std::int64_t plan_step = 0;
  // The efficiency table shows where the step goes (data, forward, backward, optimizer,
  // exchange, other); the JSON and CSV reports carry those figures either way.
  bool breakdown = false;
  // The cost axis of the accuracy–cost fronts (pareto.h): flops, peak_step_bytes,
  // step_seconds or params; "" for each task's default.
  std::string cost;
  // `leaderboard --by cost-to-target`: rank by the median cost to the target, counted in
  // `target_cost` (flops, seconds or steps); "" ranks by the metric.
  std::string rank_by;
  std::string target_cost = "flops";
};

// Below these, an interval is shown but flagged (‡) and a warning says why.
inline constexpr std::size_t kMinBootstrapN = 10;   // resampling a handful of seeds undercovers
inline constexpr std::size_t kMinWilcoxonPairs = 6; // exact two-sided p >= 2/2^n > 0.05 below 6 pairs

struct CellResult {
  Cell cell;
  stats::CellSummary summary;
  bool higher_is_better = true;
  std::size_t unit = 0;                      // index into Analysis::units
  std::optional<stats::RankedModel> rank;    // absent without values (not ranked, shown as such)
  std::map<std::string, double> efficiency;  // median over ok runs, by stored metric name
  std::optional<double> chance;              // mean over seeds of the cell's chance level (accuracy)
};

struct ComparisonResult {
  std::size_t a = 0, b = 0;  // cell indices; differences are a − b; b is the baseline in baseline mode
  stats::PairedComparison paired;
  // Adjusted within the task's family of comparisons (its table); absent where p is.
  std::optional<double> p_holm, p_bh, p_wilcoxon_holm, p_wilcoxon_bh;
  std::optional<double> p_shown;  // p_holm or p_bh, by ReportOptions::correction
  bool significant = false;       // p_shown <= alpha
};

// One (task, condition): the cells compared and ranked together.
struct Unit {
  std::string task;
  nlohmann::json condition = nlohmann::json::object();
  std::string condition_label;
  std::string label;               // "listops seq_len=64"
  std::vector<std::size_t> cells;  // ranked cells best first, then cells without values
  std::optional<std::size_t> baseline;  // the baseline's cell, in baseline mode
};

struct ScalingResult {
  std::string task, model, entrant;
  nlohmann::json condition = nlohmann::json::object();  // held fixed: the condition without seq_len
  std::string condition_label;
  std::string metric;  // peak_bytes or step_seconds_median
  std::vector<std::pair<double, double>> points;  // (seq_len, value), one per ok run
  std::size_t lengths = 0;                        // distinct seq_len values
  stats::LineFit fit;                             // log(value) against log(seq_len)
};

struct TaskResult {
  std::string task, metric;
  bool higher_is_better = true;
  std::vector<std::size_t> units, comparisons, scaling;
  std::vector<std::string> warnings;  // also in Analysis::warnings
};

struct OverallResult {
  std::vector<std::string> units;     // unit labels ranked across
  std::vector<std::string> left_out;  // "maelre: no result on listops seq_len=64"
  std::optional<stats::OverallRanking> ranking;  // absent when it cannot be computed
  std::string why_not;                // then: the reason
};

// A sequential study behind the report: its design, how far it went and why it stopped.
struct StudySummary {
  std::string sweep;
  SequentialSeeds design;
  std::vector<std::int64_t> look_seeds;
  std::optional<double> budget_seconds;
  double spent_seconds = 0;
  WavePlan plan;
  std::size_t claims_begin = 0, claims_end = 0;  // its claims in Analysis::claims
  std::size_t runs = 0;                          // its runs found (any status)
  // While it runs with a budget: one more seed of the open claims' cells in wall time, and
  // about how many seeds the budget left still buys (from the measured run times).
  std::optional<double> seconds_per_seed;
  std::optional<double> budget_buys_seeds;
  std::string study_id;  // "" for a study begun before studies had an identity
};

struct Analysis {
  ReportOptions options;
  std::vector<ClaimResult> claims;  // first in every report: the fixed designs', then each study's
  std::vector<StudySummary> studies;
  std::map<std::size_t, ClaimPlan> plans;  // by index into claims: what an open claim would cost
  std::vector<CellResult> cells;
  std::vector<Unit> units;
  std::vector<ComparisonResult> comparisons;
  std::vector<ScalingResult> scaling;
  std::vector<VariantGroup> variants;  // evaluation variants, per task and setting
  std::vector<TaskFront> fronts;       // accuracy–cost fronts, per task
  std::vector<TargetSummary> targets;  // cells whose runs have a target
  std::vector<VarianceSources> variance_sources;  // cells whose runs vary streams on their own
  std::vector<LeftOutSource> left_out;            // sources cells held that such a study found to matter
  std::optional<CostToTarget> cost_to_target;  // with rank_by = "cost-to-target"
  std::vector<TaskResult> tasks;
  OverallResult overall;
  std::vector<std::string> warnings;
  std::vector<BadResult> bad;
  std::vector<std::string> skipped, sources;
  std::size_t runs = 0;
};

// Throws UserError for a --baseline that names no entrant, or names several in one condition.
Analysis analyse(const ReportInput& input, const ReportOptions& options);

}  // namespace lrb
