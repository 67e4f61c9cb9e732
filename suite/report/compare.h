#pragma once
// `lrbench compare BEFORE AFTER`: did a change move anything? A run's identity leaves out
// the code revision and the machine, so the same sweep run by two builds (or on two
// machines) gives runs that pair exactly by key and seed. Per cell and figure:
//   - an exact figure (a count the catalogue calls exact on a CPU: bytes, FLOPs,
//     parameters), and any figure both sides computed bit for bit, is "identical" or
//     "changed", with its values;
//   - a sampled figure gets the paired difference after − before with its t interval;
//   - a time figure (seconds, a rate, the utilisation of the peak) the ratio mean(after) / mean(before) with Fieller's
//     interval, as ratio claims are judged;
// and a verdict: "unchanged" when two one-sided tests put it within its margin
// (suite/stats/equivalence.h), else "improved" or "regressed" when the paired t-test,
// adjusted over every figure compared (Benjamini–Hochberg), clears 0 (1 for a ratio) on the
// figure's better or worse side (its direction in the catalogue), else "inconclusive". Runs found on one side
// only, and runs whose status changed, are listed, never dropped. What differs between the
// sides' provenance (revision, LibTorch, BLAS core, processor, GPU, threads) is said, and
// time figures compared across machines are warned about. docs/comparing-builds.md.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "suite/report/report_input.h"
#include "suite/report/table.h"
#include "suite/stats/sample_stats.h"

namespace lrb {

// A figure's margin of "unchanged": absolute in its unit, or relative (a fraction of the
// before side's mean: 0.05 is 5 %). A time figure's is relative: a ratio's bounds are
// 1 / (1 + m) and 1 + m.
struct CompareMargin {
  double value = 0;
  bool relative = false;
};

// Each figure's default margin, from its catalogue entry: a task's score (accuracy, F1) or a
// share 0.005, seconds and rates 5 %, anything else 1 % of the before side's mean.
CompareMargin default_margin(const std::string& stored_figure);
// "accuracy=0.005" or "step_seconds_median=5%": the figure (as tables name it, or stored)
// and its margin. UserError naming --margin for an unknown figure or a value that is not a
// positive number (or that is absolute for a time figure).
std::pair<std::string, CompareMargin> parse_margin(const std::string& text);

struct CompareOptions {
  std::map<std::string, CompareMargin> margins;  // by stored figure name; the rest take default_margin
  double alpha = 0.05;
};

enum class Change { Identical, Changed, Unchanged, Improved, Regressed, Inconclusive };
const char* change_name(Change c);  // "identical", "changed", ...

struct FigureChange {
  std::string task, entrant, setting;  // the cell ("setting": what varies besides the model)
  std::string figure;                  // stored name, or "status" for a run whose status changed
  std::string kind;                    // "exact", "sampled", "time", "status"
  std::size_t pairs = 0;               // seeds with a finite value on both sides
  double before = 0, after = 0;        // means over those seeds
  std::optional<double> estimate;      // after − before; after / before for a time figure
  std::optional<stats::Interval> interval;  // at 1 − α
  std::optional<CompareMargin> margin;      // sampled and time figures
  std::optional<double> p_change, p_adjusted;  // paired t-test of no change; Benjamini–Hochberg over every figure
  std::optional<double> p_equivalence;      // two one-sided tests against the margin
  Change change = Change::Inconclusive;
  std::string why;
};

struct ProvenanceDifference {
  std::string what;  // "git_revision", "torch_version", "blas_core", "cpu", "gpu", "threads", ...
  std::vector<std::string> before, after;  // the values each side's paired runs recorded
};

struct Comparison {
  std::string before_source, after_source;
  double alpha = 0.05;
  std::size_t paired = 0;  // run keys found on both sides
  std::vector<std::string> only_before, only_after;  // "task entrant setting seed N (run key)"
  std::vector<FigureChange> changes;
  std::vector<ProvenanceDifference> provenance;
  std::vector<std::string> warnings;
  std::size_t count(Change c) const;
  // Figures not read off a clock (every one but seconds, rates and utilisation) that are not
  // identical bit for bit, and runs whose status changed: on a CPU an unchanged build moves
  // none (the CI's results check, scripts/results_check.sh).
  std::size_t moved() const;
};

// UserError when the two sides share no run key (different sweeps, settings or base seeds).
Comparison compare_results(const ReportInput& before, const ReportInput& after, const CompareOptions& options);

// The tables (what differs, the verdicts by count, every figure's change, the runs on one
// side only) and the JSON document (results/REPORT_SCHEMA.md, "compare").
Report comparison_report(const Comparison& c);

}  // namespace lrb
