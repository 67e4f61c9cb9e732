// A task's summary table: each cell's mean, intervals, rank and failures.
#include "suite/report/task_tables.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "suite/core/text.h"
#include "suite/report/report_tables.h"
#include "suite/report/table_cells.h"
#include "suite/report/text_format.h"

namespace lrb::task_tables {

using namespace table_cells;

namespace {

bool any_no_value(const Analysis& a, const TaskResult& t) {
  for (std::size_t u : t.units)
    for (std::size_t i : a.units[u].cells)
      if (a.cells[i].cell.no_value > 0) return true;
  return false;
}

// The comparison of cell i against the unit's baseline (baseline mode).
const ComparisonResult* versus_baseline(const Analysis& a, const TaskResult& t, std::size_t i) {
  for (std::size_t k : t.comparisons)
    if (a.comparisons[k].a == i) return &a.comparisons[k];
  return nullptr;
}

}  // namespace

Table summary_table(const Analysis& a, const TaskResult& t) {
  const std::string m = display_metric(t.metric);
  const bool extra = any_no_value(a, t);
  const bool baseline_mode = !a.options.baseline.empty();
  Table tab;
  tab.id = "summary-" + slug(t.task);
  tab.task = t.task;
  tab.title = fmt::format("{} — {} ({}), over seeds", t.task, m, direction_text(t.metric));
  // Accuracy reads against what always answering the commonest class scores.
  bool show_chance = false;
  if (m == "accuracy")
    for (std::size_t u : t.units)
      for (std::size_t i : a.units[u].cells) show_chance = show_chance || a.cells[i].chance.has_value();
  tab.columns = {"model", "setting", m + " mean ± std"};
  if (show_chance) tab.columns.push_back("chance");
  for (const char* col : {"95% CI (t)", "95% CI (BCa)", "rank", "n", "failed", "stopped"}) tab.columns.push_back(col);
  if (extra) tab.columns.push_back("no value");
  bool any_marked = false, any_caution = false;
  for (std::size_t u : t.units) {
    const Unit& unit = a.units[u];
    std::size_t ranked = 0;
    for (std::size_t i : unit.cells) ranked += a.cells[i].rank ? 1 : 0;
    for (std::size_t i : unit.cells) {
      const CellResult& c = a.cells[i];
      const auto& s = c.summary;
      std::vector<TableCell> row;
      row.push_back(text(c.cell.entrant + (unit.baseline == i ? " (baseline)" : "")));
      row.push_back(text(c.cell.condition_label.empty() ? "-" : c.cell.condition_label));
      row.push_back(mean_std(c));
      // The first ranked cell has the best mean; exact ties with it are best too.
      row.back().best = ranked > 1 && c.rank && c.rank->mean == a.cells[unit.cells.front()].rank->mean;
      if (baseline_mode)
        if (const ComparisonResult* cmp = versus_baseline(a, t, i); cmp && cmp->significant) {
          row.back().marked = true;
          any_marked = true;
        }
      if (show_chance) row.push_back(c.chance ? number(*c.chance, format_value(*c.chance)) : text("–"));
      row.push_back(s.n == 0 ? text("–") : interval(s.t_ci, s.n));
      const bool caution = s.n >= 2 && s.n < kMinBootstrapN;
      any_caution = any_caution || caution;
      row.push_back(s.n == 0 ? text("–") : interval(s.bootstrap.bca, s.n, caution));
      row.push_back(text(rank_text(c, unit, a.cells)));
      if (c.rank) row.back().value = static_cast<double>(c.rank->group_rank);
      row.push_back(count(s.n));
      row.push_back(count(static_cast<std::size_t>(c.cell.failed), true));
      row.push_back(count(static_cast<std::size_t>(c.cell.stopped), true));
      if (extra) row.push_back(count(static_cast<std::size_t>(c.cell.no_value), true));
      tab.rows.push_back(std::move(row));
      tab.row_keys.push_back(cell_key(i));
    }
  }
  tab.notes.push_back(fmt::format(
      "mean ± std over seeds; 95% CI (t): Student-t interval of the mean; 95% CI (BCa): bootstrap BCa interval of the mean ({}); "
      "n: runs with a value; {} best mean in its setting",
      bootstrap_note(a.options.bootstrap), kBestMark));
  tab.notes.push_back(ranking_rule(a.options));
  if (show_chance)
    tab.notes.push_back("chance: the accuracy of always answering the evaluation split's commonest class (mean over seeds)");
  if (any_marked)
    tab.notes.push_back(fmt::format("{} differs significantly from the baseline {} (paired t-test by seed, {}-adjusted p ≤ {})",
                                    kSignificantMark, a.options.baseline, correction_label(a.options.correction), a.options.alpha));
  if (any_caution)
    tab.notes.push_back(fmt::format("{} n < {}: the bootstrap interval undercovers (too few seeds to resample); read the t interval",
                                    kCautionMark, kMinBootstrapN));
  tab.notes.push_back("n=1: one run, so no spread and no interval; failed, stopped: runs that gave no value (listed below)");
  for (std::size_t u : t.units)
    for (std::size_t i : a.units[u].cells)
      for (const auto& p : a.cells[i].cell.problems) tab.notes.push_back(problem_note(a.cells[i].cell, p));
  return tab;
}

}  // namespace lrb::task_tables
