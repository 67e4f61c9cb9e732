#pragma once
// What a study claims, stated next to what it runs: the [[claim]] tables of a sweep file.
//
// A claim names the cells it compares by selectors ("maelre with attention = auto on
// fashion-mnist"), a metric, and a kind:
//   better     A beats B on the metric by more than `margin` (paired by seed);
//   not-worse  A is within `margin` of B or better (paired by seed);
//   scaling    the metric of A grows with `over` (seq_len or batch_size) as a power law whose
//              log-log slope lies in `slope` = [lo, hi];
//   ratio      mean(A) / mean(B) is at most `at_most` and/or at least `at_least`;
//   dominates  A is at least as good as B on the metric within `margin` (a not-worse half)
//              and cheaper by `factor` on a cost figure: mean cost A / mean cost B ≤ 1/factor
//              (a ratio half); supported when both halves are, refuted when either is;
//   variance   the variance a study varying only the streams `of` would see over that of one
//              varying `against` (default: every stream the cell varies) is at most `at_most`
//              and/or at least `at_least`, on A's values or, with B, on A − B paired on the
//              streams ([sweep] vary: suite/stats/variance_ratio.h).
// Selectors are checked against the expanded sweep before anything runs (each side must
// name exactly one cell, or for scaling one cell per value of `over`), so a claim that
// cannot be tested is a file:line:column error, not a surprise in the report. The report
// (suite/report/claims/claims.h) turns each claim into a verdict.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "suite/contracts/options.h"

namespace toml {
inline namespace v3 {
class array;
}  // namespace v3
}  // namespace toml

namespace lrb {

struct RunSpec;

enum class ClaimKind { Better, NotWorse, Scaling, Ratio, Dominates, Variance };
const char* claim_kind_name(ClaimKind k);

// One side of a claim: the runs whose resolved spec has every (path, value) pair. Paths are
// canonical spec paths: "model.name", "model.options.attention", "task.name",
// "task.seq_len", "task.options.train_size", "train.lr".
struct CellSelector {
  std::vector<std::pair<std::string, json>> match;
  std::vector<SourceLocation> match_where;  // where each pair was written (not stored in JSON)
  std::string label;  // as a reader would say it: "maelre attention=auto"
  SourceLocation where;
  // An evaluation variant of the selected runs ([[variant]], variant_spec.h): the side's
  // values are the metric as that variant recorded it ("variant.<name>.<metric>"), so two
  // sides may select the same runs under different variants and pair them by seed.
  std::string variant;
  SourceLocation variant_where;
  // Filled by check_claims from the expanded sweep: how many runs the side has, and (scaling)
  // the values of `over` they take. A report compares them with what it finds.
  std::size_t expected_runs = 0;
  std::vector<double> expected_over;

  bool matches(const json& run_spec) const;
  // The stored metric name this side reads: `metric`, or "variant.<variant>.<metric>".
  std::string metric_name(const std::string& metric) const;
  json to_json() const;
  static CellSelector from_json(const json& j);
};

struct ClaimSpec {
  std::string name;       // unique within the sweep: letters, digits, '.', '_', '-'
  std::string statement;  // the claim in words
  std::string source;     // where it comes from: paper, table
  ClaimKind kind = ClaimKind::Better;
  std::string metric;     // stored run metric: "eval_accuracy", "peak_bytes", ...
  SourceLocation metric_where;
  CellSelector a, b;      // b: not used by scaling; optional for variance (empty match: none)
  double margin = 0;      // better: by more than margin; not-worse: within margin
  std::string over;       // scaling: "task.seq_len" or "train.batch_size"
  double slope_lo = 0, slope_hi = 0;                // scaling
  std::optional<double> at_most, at_least;          // ratio
  std::string cost;       // dominates: the stored cost figure ("train_flops", "params", ...)
  double factor = 1;      // dominates: A's cost × factor ≤ B's cost
  std::vector<std::string> of, against;  // variance: stream names (kStreams); against empty: all
  SourceLocation of_where, against_where;
  SourceLocation where;

  json to_json() const;
  static ClaimSpec from_json(const json& j);
  // What is judged: to_json() without the words (statement, source) and the place in the
  // file. Two claims with equal definitions get the same verdict from the same runs.
  json definition() const;
  // "Δ > 0", "slope in [0.9, 1.1]", "ratio ≤ 0.627": the claimed region, for tables.
  std::string claimed_text(bool higher_is_better) const;
  // A dominates claim's halves, each a claim of its own kind judged as such: the not-worse
  // half on the metric ("<name>:metric") and the ratio half on the cost ("<name>:cost").
  ClaimSpec metric_half() const;
  ClaimSpec cost_half() const;
};

// The cost figures a dominates claim (and `report --cost`) may name: the stored name of
// "flops", "peak_step_bytes", "step_seconds", "params" or of a stored name among them
// ("train_flops", "step_seconds_median"); "" for any other name.
std::string cost_figure_name(const std::string& name);
const std::vector<std::string>& cost_figure_names();  // the short names, for messages

// Figures every run records beside its task's metrics, which a claim may name.
const std::vector<std::string>& claimable_run_figures();
// The stored name of a metric as a claim or report names it: "accuracy" -> "eval_accuracy";
// a run figure ("peak_bytes"), a variant figure ("infer_peak_bytes_b16", "probe_pool1_cosine")
// or a stored name ("eval_loss") as it is.
std::string stored_metric_name(const std::string& metric);

// Reads the [[claim]] array of a sweep file. The registries are consulted for option names
// and types; cells are checked against the expansion later (check_claims).
std::vector<ClaimSpec> parse_claims(const toml::array& claims, const std::string& file);

// Each side must select runs of the sweep: one cell (better, not-worse, ratio) or one cell
// per value of `over` with at least three values (scaling). UserError at the claim's key.
// Fills each side's expected_runs and expected_over.
void check_claims(std::vector<ClaimSpec>& claims, const std::vector<RunSpec>& runs, bool measurement);

}  // namespace lrb
