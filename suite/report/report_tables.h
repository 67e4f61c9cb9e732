#pragma once
// The tables of an Analysis, for people: what `lrbench report` and `lrbench leaderboard`
// print. Every sink that shows tables (terminal, Markdown, LaTeX, HTML) renders these.
#include <string>
#include <optional>
#include <vector>

#include "suite/report/analysis.h"
#include "suite/report/table.h"

namespace lrb {

// First the claims and their verdicts (when the sweeps declared any); then per task: summary
// (mean ± std, chance level for accuracy, t and BCa intervals, tie-group rank, n, failed,
// stopped), spread over seeds (sem, percentile interval, median, IQR, IQM, min, max), paired
// comparisons, efficiency (when recorded), scaling fits (when 3+ sequence lengths). A task
// whose metric has no value anywhere (a measurement sweep) leads with efficiency and scaling
// and leaves out the tables that would only say "no result".
std::vector<Table> report_tables(const Analysis& a);

// Per (task, setting): tie groups; then mean rank and normalised IQM across them.
std::vector<Table> leaderboard_tables(const Analysis& a);

// `lrbench plan`: what settling each inconclusive claim would cost; none without one.
const char* correction_label(stats::Correction c);  // "Holm", "Benjamini–Hochberg", "none"

// How a scaling fit reads: "constant", "linear" or "quadratic" when its slope interval comes
// within kSlopeTolerance of 0, 1 or 2 (a slope of 0.996 [0.993, 0.999] is linear, not
// "sublinear"); "sublinear", "between linear and quadratic" or "superquadratic" only when it
// stays clear of all three; "undecided (…)" when it reaches two.
inline constexpr double kSlopeTolerance = 0.1;
std::string scaling_reading(const stats::LineFit& f);

}  // namespace lrb
