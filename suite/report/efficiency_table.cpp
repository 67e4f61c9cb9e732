// A task's efficiency table: medians over each cell's ok runs.
#include "suite/report/task_tables.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "suite/core/text.h"
#include "suite/report/efficiency.h"
#include "suite/report/report_tables.h"
#include "suite/report/table_cells.h"
#include "suite/report/text_format.h"

namespace lrb::task_tables {

using namespace table_cells;

bool no_metric_values(const Analysis& a, const TaskResult& t) {
  for (std::size_t u : t.units)
    for (std::size_t i : a.units[u].cells)
      if (!a.cells[i].cell.values.empty()) return false;
  return true;
}

// The efficiency figures some cell of the task has (a breakdown figure only when asked for).

namespace {

std::vector<const EfficiencyMetric*> shown_efficiency_metrics(const Analysis& a, const TaskResult& t) {
  std::vector<const EfficiencyMetric*> shown;
  for (const auto& em : efficiency_metrics()) {
    if (em.breakdown && !a.options.breakdown) continue;
    bool present = false, with = std::string(em.only_with).empty();
    for (std::size_t u : t.units)
      for (std::size_t i : a.units[u].cells) {
        present = present || a.cells[i].efficiency.count(em.name) || a.cells[i].cell.not_counted.count(em.name);
        with = with || a.cells[i].efficiency.count(em.only_with);
      }
    if (present && with) shown.push_back(&em);
  }
  return shown;
}

// One unit's rows of the efficiency table, each figure's best in the unit marked. Sets
// `any_not_counted` when a cell could not count a figure.
void add_efficiency_rows(const Analysis& a, const Unit& unit, const std::vector<const EfficiencyMetric*>& shown, Table& tab,
                         bool& any_not_counted) {
  std::vector<std::optional<double>> best(shown.size());
  for (std::size_t i : unit.cells)
    for (std::size_t k = 0; k < shown.size(); ++k) {
      auto it = a.cells[i].efficiency.find(shown[k]->name);
      if (it == a.cells[i].efficiency.end() || !shown[k]->directed) continue;  // a budget has no best
      if (!best[k] || (shown[k]->higher_is_better ? it->second > *best[k] : it->second < *best[k])) best[k] = it->second;
    }
  for (std::size_t i : unit.cells) {
    const CellResult& c = a.cells[i];
    std::vector<TableCell> row;
    row.push_back(text(c.cell.entrant));
    row.push_back(text(c.cell.condition_label.empty() ? "-" : c.cell.condition_label));
    std::size_t runs = 0;
    for (std::size_t k = 0; k < shown.size(); ++k) {
      auto it = c.efficiency.find(shown[k]->name);
      if (it == c.efficiency.end()) {
        const bool uncounted = c.cell.not_counted.count(shown[k]->name) > 0;
        any_not_counted = any_not_counted || uncounted;
        row.push_back(text(uncounted ? "not counted" : "–"));
        continue;
      }
      row.push_back(number(it->second, format_efficiency(*shown[k], it->second)));
      row.back().best = unit.cells.size() > 1 && it->second == *best[k] && std::string(shown[k]->only_with).empty();
      runs = std::max(runs, c.cell.efficiency.at(shown[k]->name).size());
    }
    row.push_back(count(runs));
    row.push_back(count(static_cast<std::size_t>(c.cell.failed + c.cell.stopped), true));
    tab.rows.push_back(std::move(row));
    tab.row_keys.push_back(cell_key(i));
  }
}

// What the efficiency table's figures mean, its size matches and its runs without figures.
void add_efficiency_notes(const Analysis& a, const TaskResult& t, bool any_not_counted, Table& tab) {
  tab.notes.push_back(fmt::format(
      "medians over the ok runs of each cell; step median and p95: per-run step times after warm-up; peak memory: the run's "
      "peak allocation; step memory: a training step's own peak above the resident parameters, gradients and optimizer "
      "state (activations and temporaries; a run's first step, which allocates those, is not counted); FLOP/s: the "
      "model's FLOPs per training step (3 × forward × batch) over the step median; util: that over the measured float32 "
      "matrix-product peak of the ranks that trained it (provenance matmul_peak); {} best in its "
      "setting (throughput, FLOP/s, util and batch: highest; the rest: lowest); runs: ok runs measured; failed: runs "
      "failed or stopped (listed below)",
      kBestMark));
  if (any_not_counted)
    tab.notes.push_back("not counted: a figure its runs could not measure (a TorchScript model's FLOPs when none of the "
                        "products lrbench counts ran: docs/python-models.md), so FLOP/s and util are not given either");
  for (std::size_t u : t.units)
    for (std::size_t i : a.units[u].cells)
      for (const auto& [option, m] : a.cells[i].cell.matched.items())
        tab.notes.push_back(fmt::format("{}{}: {} = {} by a size match, {} {} nearest {:g}", a.cells[i].cell.entrant,
                                        a.cells[i].cell.condition_label.empty() ? "" : " " + a.cells[i].cell.condition_label, option,
                                        m.contains("value") ? m.at("value").dump() : "?", format_count(m.value("count", 0.0)),
                                        m.value("figure", std::string("params")), m.value("to", 0.0)));
  // Runs that gave no figures are shown here too (in a measurement report this is the first
  // table, and a failure must never hide behind a dash).
  for (std::size_t u : t.units)
    for (std::size_t i : a.units[u].cells)
      for (const auto& p : a.cells[i].cell.problems)
        if (p.status != "no value") tab.notes.push_back(problem_note(a.cells[i].cell, p));
}

}  // namespace

std::optional<Table> efficiency_table(const Analysis& a, const TaskResult& t) {
  const std::vector<const EfficiencyMetric*> shown = shown_efficiency_metrics(a, t);
  if (shown.empty()) return std::nullopt;
  Table tab;
  tab.id = "efficiency-" + slug(t.task);
  tab.task = t.task;
  tab.title = t.task + " — efficiency (median over ok runs)";
  tab.columns = {"model", "setting"};
  for (const auto* em : shown) tab.columns.push_back(em->header);
  tab.columns.push_back("runs");
  tab.columns.push_back("failed");
  bool any_not_counted = false;
  for (std::size_t u : t.units) add_efficiency_rows(a, a.units[u], shown, tab, any_not_counted);
  add_efficiency_notes(a, t, any_not_counted, tab);
  return tab;
}

}  // namespace lrb::task_tables
