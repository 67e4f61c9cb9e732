#include "suite/report/cost_tables.h"

#include <fmt/format.h>

#include <algorithm>

#include "suite/core/errors.h"
#include "suite/core/text.h"
#include "suite/report/efficiency.h"
#include "suite/report/table_cells.h"
#include "suite/report/text_format.h"

namespace lrb {
namespace {

using namespace table_cells;

const EfficiencyMetric& cost_metric(const std::string& figure) {
  const auto& all = efficiency_metrics();
  const auto it = std::find_if(all.begin(), all.end(), [&](const EfficiencyMetric& m) { return figure == m.name; });
  LRB_CHECK(it != all.end(), "every cost a front uses is an efficiency figure: " + figure);
  return *it;
}

TableCell cost_interval(const EfficiencyMetric& m, const AxisSummary& s) {
  if (s.budget) return number(*s.mean, "budget");
  if (s.exact) return number(*s.mean, "exact");
  if (!s.ci) return text(s.n == 1 ? "n=1" : "–");
  return number(s.ci->lo, "[" + format_efficiency(m, s.ci->lo) + ", " + format_efficiency(m, s.ci->hi) + "]");
}

// The dominating cell, Δ and the cost ratio with their intervals, and how clear it is.
void domination_cells(const Analysis& a, const FrontPoint& p, std::vector<TableCell>& row) {
  if (!p.dominated_by) {
    for (int k = 0; k < 4; ++k) row.push_back(text("–"));
    return;
  }
  const Domination& d = *p.dominated_by;
  const Cell& by = a.cells[d.by].cell;
  row.push_back(text(by.entrant + (by.condition_label.empty() ? "" : " " + by.condition_label)));
  std::string delta = d.delta ? format_signed(*d.delta) : "–";
  if (d.delta_ci) delta += " [" + format_signed(d.delta_ci->lo) + ", " + format_signed(d.delta_ci->hi) + "]";
  row.push_back(d.delta ? number(*d.delta, delta) : text(delta));
  std::string ratio = d.ratio ? fmt::format("{:.3g}", *d.ratio) : "–";
  if (d.ratio_exact) ratio += " (exact)";
  else if (d.ratio_ci) ratio += fmt::format(" [{:.3g}, {:.3g}]", d.ratio_ci->lo, d.ratio_ci->hi);
  row.push_back(d.ratio ? number(*d.ratio, ratio) : text(ratio));
  row.push_back(text(d.clear ? "clear" : "in the means only"));
  row.back().best = d.clear;
}

std::vector<TableCell> front_row(const Analysis& a, const EfficiencyMetric& m, const FrontPoint& p) {
  const Cell& c = a.cells[p.cell].cell;
  std::vector<TableCell> row = {text(c.entrant), text(c.setting_shown())};
  row.push_back(p.metric.mean ? number(*p.metric.mean, format_value(*p.metric.mean)) : text("no result"));
  row.back().alert = !p.metric.mean;
  row.push_back(interval(p.metric.ci, p.metric.n));
  row.push_back(p.cost.mean ? number(*p.cost.mean, format_efficiency(m, *p.cost.mean)) : text("–"));
  row.push_back(cost_interval(m, p.cost));
  row.push_back(count(p.metric.n));
  row.push_back(count(static_cast<std::size_t>(c.failed), true));
  row.push_back(count(static_cast<std::size_t>(c.stopped), true));
  row.push_back(text(p.on_front ? "on the front" : p.placed ? "dominated" : "not placed: " + p.why_not_placed));
  row.back().best = p.on_front;
  domination_cells(a, p, row);
  return row;
}

}  // namespace

std::optional<Table> front_table(const Analysis& a, const std::string& task) {
  const auto f = std::find_if(a.fronts.begin(), a.fronts.end(), [&](const TaskFront& x) { return x.task == task; });
  if (f == a.fronts.end()) return std::nullopt;
  const EfficiencyMetric& m = cost_metric(f->cost);
  const std::string metric = display_metric(f->metric);
  Table tab;
  tab.id = "front-" + slug(task);
  tab.task = task;
  tab.title = fmt::format("{} — {} ({}) against cost: {} ({}), accuracy–cost front", task, metric, direction_text(f->metric), m.header,
                          f->cost_choice);
  tab.columns = {"model", "setting", metric + " mean", "95% CI (t)", m.header + std::string(" mean"), "95% CI (t)", "n", "failed",
                 "stopped", "front", "dominated by", "Δ " + metric + " (by − this)", "cost ratio by / this", "domination"};
  for (const auto& p : f->points) {
    tab.rows.push_back(front_row(a, m, p));
    tab.row_keys.push_back(cell_key(p.cell));
  }
  tab.notes.push_back(fmt::format(
      "every cell of the task, across its settings, cheapest first; means over its ok runs with {:.0f} % t intervals; exact: a cost "
      "counted deterministically on a CPU, equal on every seed (no spread, a zero-width interval)",
      f->confidence * 100));
  if (std::any_of(f->points.begin(), f->points.end(), [](const FrontPoint& p) { return p.cost.budget; }))
    tab.notes.push_back("budget: runs trained to a FLOP budget are placed at it; each spent it less up to one step (its steps are "
                        "floor(budget / FLOPs per step)), so cells of one budget cost the same");
  tab.notes.push_back("on the front: no other cell is at least as good on " + metric + " and at most as costly, better on one "
                      "(by the means; equal means on both axes dominate nothing)");
  tab.notes.push_back(fmt::format(
      "dominated by: the cell that dominates it (a clear one first, then one on the front), with the paired evidence over the seeds "
      "both ran: Δ {} with its t interval, and the cost ratio with Fieller's interval (exact costs: their ratio); clear: both "
      "intervals on the dominating side (an exactly equal cost counts as not more); otherwise it holds in the means only",
      metric));
  tab.notes.push_back(fmt::format("{} on the front; a clear domination", kBestMark));
  for (const auto& p : f->points)
    if (p.dominated_by && !p.dominated_by->clear)
      tab.notes.push_back(a.cells[p.cell].cell.entrant + ": " + p.dominated_by->reading);
  return tab;
}

namespace {

std::string median_text(const TargetSummary& t, const std::optional<double>& v, const std::string& cost) {
  if (t.finished == 0) return "–";
  if (!t.median_reached) return "not reached";
  if (!v) return "not counted";
  if (cost == "flops") return format_count(*v);
  if (cost == "seconds") return format_seconds(*v);
  return fmt::format("{:.0f}", *v);
}

TableCell median_cell(const TargetSummary& t, const std::string& cost) {
  const std::optional<double>& v = median_cost(t, cost);
  TableCell c = v ? number(*v, median_text(t, v, cost)) : text(median_text(t, v, cost));
  c.alert = t.finished > 0 && !t.median_reached;
  return c;
}

std::string target_text(const Cell& c) {
  if (!c.target.is_object()) return "–";
  const std::string metric = c.target.value("metric", std::string());
  const std::string op = figure_direction(metric) == Direction::Lower ? " ≤ " : " ≥ ";
  return display_metric(metric) + op + fmt::format("{:g}", c.target.value("value", 0.0));
}

TableCell share_cell(const TargetSummary& t) {
  if (!t.share) return text("–");
  return number(*t.share, fmt::format("{}/{}", t.reached, t.finished));
}

TableCell wilson_cell(const TargetSummary& t) {
  if (!t.wilson) return text("–");
  return number(t.wilson->lo, fmt::format("[{:.2f}, {:.2f}]", t.wilson->lo, t.wilson->hi));
}

}  // namespace

std::optional<Table> target_table(const Analysis& a, const std::string& task) {
  Table tab;
  tab.id = "target-" + slug(task);
  tab.task = task;
  tab.title = task + " — cost to the target: share of runs that reached it, median cost over every run";
  tab.columns = {"model", "setting", "target", "runs", "reached", "95% CI (Wilson)", "median steps", "median FLOPs", "median seconds",
                 "failed", "stopped"};
  for (const auto& t : a.targets) {
    const Cell& c = a.cells[t.cell].cell;
    if (c.task != task) continue;
    tab.rows.push_back({text(c.entrant), text(c.setting_shown()), text(target_text(c)), count(t.runs), share_cell(t), wilson_cell(t),
                        median_cell(t, "steps"), median_cell(t, "flops"), median_cell(t, "seconds"),
                        count(t.failed, true), count(t.stopped, true)});
    tab.row_keys.push_back(cell_key(t.cell));
  }
  if (tab.rows.empty()) return std::nullopt;
  tab.notes.push_back(fmt::format(
      "reached: runs whose evaluation reached the target, of the finished runs (a failed run never reached it; a stopped run has "
      "not finished and is left out); 95% CI: Wilson's score interval of the share ({:.0f} %; the JSON report adds Clopper–Pearson's)",
      a.options.bootstrap.confidence * 100));
  tab.notes.push_back("median cost: over every finished run, a run that never reached the target counted as never (AlgoPerf's "
                      "rule): \"not reached\" when half or more never reached it; steps and FLOPs (model FLOPs, not padded or "
                      "masked work) are reproducible anywhere, seconds are the training step times of the machine that ran it; "
                      "not counted: a run that reached it without recording that figure");
  return tab;
}

std::vector<Table> cost_to_target_tables(const Analysis& a) {
  if (!a.cost_to_target) return {};
  const CostToTarget& ct = *a.cost_to_target;
  std::vector<Table> out;
  for (const auto& u : ct.units) {
    const Unit& unit = a.units[u.unit];
    Table tab;
    tab.id = "cost-to-target-" + std::to_string(u.unit + 1) + "-" + slug(unit.task);
    tab.task = unit.task;
    tab.title = fmt::format("{} — models by median {} to the target (never reached counts as never)", unit.label, ct.cost);
    tab.columns = {"rank", "model", "median " + ct.cost, "reached", "95% CI (Wilson)", "runs", "failed", "stopped"};
    for (const auto& e : u.entries) {
      const TargetSummary& t = a.targets[e.target];
      std::vector<TableCell> row;
      row.push_back(e.rank ? number(static_cast<double>(e.rank), std::to_string(e.rank) + (e.shared ? "=" : "")) : text("–"));
      row.push_back(text(a.cells[e.cell].cell.entrant));
      row.push_back(median_cell(t, ct.cost));
      row.back().best = e.rank == 1 && e.median;
      row.push_back(share_cell(t));
      row.push_back(wilson_cell(t));
      row.push_back(count(t.runs));
      row.push_back(count(t.failed, true));
      row.push_back(count(t.stopped, true));
      tab.rows.push_back(std::move(row));
      tab.row_keys.push_back(cell_key(e.cell));
    }
    tab.notes.push_back("rank: by the median " + ct.cost + " to the target over every finished run (AlgoPerf's rule: a run that "
                        "never reached it counts as never; the median is \"not reached\" when half or more never did); equal "
                        "medians share a rank (\"2=\"), and so do the models that did not reach it, after the rest; \"–\": not "
                        "ranked (no finished run, or a cost the runs did not count); " + std::string(kBestMark) + " the cheapest");
    out.push_back(std::move(tab));
  }
  Table p;
  p.id = "cost-profile";
  p.title = fmt::format("across tasks — performance profile of the median {} to the target", ct.cost);
  p.columns = {"model"};
  for (double tau : ct.profile.taus) p.columns.push_back(fmt::format("ρ({:g})", tau));
  p.columns.push_back("tasks");
  for (const auto& m : ct.profile.models) {
    std::vector<TableCell> row = {text(m.entrant)};
    for (double r : m.rho) row.push_back(number(r, fmt::format("{:.2f}", r)));
    row.push_back(count(m.ratios.size()));
    p.rows.push_back(std::move(row));
  }
  p.notes.push_back(fmt::format(
      "ρ(τ): the share of the {} task(s) and setting(s) where the model's median {} to the target is at most τ × the best "
      "model's there (Dolan & Moré's performance profile); a task where it never reached the target (or did not run) "
      "never counts as within; ρ(1): the share of tasks it is the cheapest on",
      ct.profile.units.size(), ct.cost));
  p.notes.push_back("tasks: " + join(ct.profile.units, "; "));
  out.push_back(std::move(p));
  return out;
}

}  // namespace lrb
