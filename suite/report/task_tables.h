#pragma once
// The tables of one task, one builder a file (report_tables.cpp puts them in order):
// summary_table.cpp, spread_table.cpp, comparison_table.cpp, efficiency_table.cpp,
// scaling_table.cpp; the cells and notes they share in task_table_parts.cpp.
#include <cstddef>
#include <optional>
#include <string>

#include "suite/report/analysis.h"
#include "suite/report/table.h"

namespace lrb::task_tables {

// Mean ± std, chance, t and BCa intervals, tie-group rank, n, failed and stopped, per cell.
Table summary_table(const Analysis& a, const TaskResult& t);
// sem, percentile interval, median, IQR, IQM, min and max over seeds.
Table spread_table(const Analysis& a, const TaskResult& t);
// Paired comparisons by seed (all pairs, or against the baseline).
Table comparison_table(const Analysis& a, const TaskResult& t);
// Efficiency medians; none when no run recorded a figure.
std::optional<Table> efficiency_table(const Analysis& a, const TaskResult& t);
// Log-log fits against sequence length; none with fewer than 3 lengths.
std::optional<Table> scaling_table(const Analysis& a, const TaskResult& t);
// No cell of the task has a value of its metric (a measurement sweep, or nothing finished).
bool no_metric_values(const Analysis& a, const TaskResult& t);

// Shared by the builders and the leaderboard.
TableCell value(const std::optional<double>& v, std::size_t n);  // "n=1" or "–" without one
TableCell p_value(const std::optional<double>& p, std::size_t n);
std::string rank_text(const CellResult& c, const Unit& u, const std::vector<CellResult>& cells);  // "1", "1=", "–"
TableCell mean_std(const CellResult& c);
std::string bootstrap_note(const stats::BootstrapSettings& b);
std::string ranking_rule(const ReportOptions& o);
std::string problem_note(const Cell& c, const RunProblem& p);

}  // namespace lrb::task_tables
