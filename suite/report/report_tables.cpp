#include "suite/report/report_tables.h"

#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join (in fmt/format.h only up to fmt 10)

#include <algorithm>
#include <cmath>

#include "suite/config/run_streams.h"
#include "suite/core/text.h"
#include "suite/report/claims/claim_tables.h"
#include "suite/report/claims/claims.h"
#include "suite/report/cost_tables.h"
#include "suite/report/efficiency.h"
#include "suite/report/table_cells.h"
#include "suite/report/task_tables.h"
#include "suite/report/text_format.h"
#include "suite/report/variance_sources.h"

namespace lrb {

const char* correction_label(stats::Correction c) {
  switch (c) {
    case stats::Correction::kHolm: return "Holm";
    case stats::Correction::kBenjaminiHochberg: return "Benjamini–Hochberg";
    case stats::Correction::kNone: break;
  }
  return "none";
}

namespace {
using namespace table_cells;
using namespace task_tables;
}  // namespace

std::vector<Table> report_tables(const Analysis& a) {
  std::vector<Table> out;
  if (!a.claims.empty()) out.push_back(claims_table(a));
  if (!a.studies.empty()) out.push_back(claim_looks_table(a));
  for (const auto& t : a.tasks) {
    auto efficiency = efficiency_table(a, t);
    // A measurement sweep records figures, not the task's metric: lead with what it measured
    // and leave out the tables that would only say "no result".
    const bool measured_only = no_metric_values(a, t) && efficiency;
    if (!measured_only) {
      out.push_back(summary_table(a, t));
      out.push_back(spread_table(a, t));
      if (auto v = variance_table(a, t.task)) out.push_back(std::move(*v));
      if (!t.comparisons.empty()) out.push_back(comparison_table(a, t));
    }
    if (efficiency) out.push_back(std::move(*efficiency));
    if (auto f = front_table(a, t.task)) out.push_back(std::move(*f));
    if (auto g = target_table(a, t.task)) out.push_back(std::move(*g));
    if (auto s = scaling_table(a, t)) out.push_back(std::move(*s));
    for (auto& v : variant_tables(a.variants, t.task)) out.push_back(std::move(v));
  }
  return out;
}

std::vector<Table> leaderboard_tables(const Analysis& a) {
  if (a.cost_to_target) return cost_to_target_tables(a);
  std::vector<Table> out;
  const std::string corr = correction_label(a.options.correction);
  for (std::size_t u = 0; u < a.units.size(); ++u) {
    const Unit& unit = a.units[u];
    const CellResult& first = a.cells[unit.cells.front()];
    Table tab;
    tab.id = "ranking-" + std::to_string(u + 1) + "-" + slug(unit.task);
    tab.title = fmt::format("{} — {} ({}): tie groups", unit.label, display_metric(first.cell.metric), direction_text(first.cell.metric));
    tab.columns = {"rank", "model", "mean ± std", "95% CI (t)", "n", "failed", "stopped", "p vs group leader (" + corr + ")"};
    std::size_t ranked = 0;
    for (std::size_t i : unit.cells) ranked += a.cells[i].rank ? 1 : 0;
    for (std::size_t i : unit.cells) {
      const CellResult& c = a.cells[i];
      std::vector<TableCell> row;
      row.push_back(text(rank_text(c, unit, a.cells)));
      if (c.rank) row.back().value = static_cast<double>(c.rank->group_rank);
      row.push_back(text(c.cell.entrant));
      row.push_back(mean_std(c));
      row.back().best = ranked > 1 && c.rank && c.rank->mean == a.cells[unit.cells.front()].rank->mean;
      row.push_back(c.summary.n == 0 ? text("–") : interval(c.summary.t_ci, c.summary.n));
      row.push_back(count(c.summary.n));
      row.push_back(count(static_cast<std::size_t>(c.cell.failed), true));
      row.push_back(count(static_cast<std::size_t>(c.cell.stopped), true));
      if (!c.rank) row.push_back(text("not ranked"));
      else if (c.rank->leader) row.push_back(text("leader"));
      else row.push_back(p_value(c.rank->p_adjusted_vs_leader, c.rank->n_pairs_vs_leader));
      tab.rows.push_back(std::move(row));
    }
    tab.notes.push_back(ranking_rule(a.options));
    tab.notes.push_back(fmt::format("{} best mean; p vs group leader: paired t-test by seed against the leader of the step that "
                                    "placed the model, adjusted over that step's comparisons",
                                    kBestMark));
    for (std::size_t i : unit.cells)
      for (const auto& p : a.cells[i].cell.problems) tab.notes.push_back(problem_note(a.cells[i].cell, p));
    out.push_back(std::move(tab));
  }
  const OverallResult& o = a.overall;
  if (o.ranking) {
    Table tab;
    tab.id = "overall";
    tab.title = "across tasks — mean rank and normalised score";
    tab.columns = {"model", "mean rank", "95% CI (bootstrap)", "normalised IQM", "95% CI (bootstrap)", "tasks"};
    double best_rank = o.ranking->models.front().mean_rank;
    std::optional<double> best_iqm;
    for (const auto& m : o.ranking->models)
      if (m.normalised_iqm && (!best_iqm || *m.normalised_iqm > *best_iqm)) best_iqm = m.normalised_iqm;
    for (const auto& m : o.ranking->models) {
      std::vector<TableCell> row;
      row.push_back(text(m.model));
      row.push_back(number(m.mean_rank, fmt::format("{:.2f}", m.mean_rank)));
      row.back().best = o.ranking->models.size() > 1 && m.mean_rank == best_rank;
      row.push_back(m.mean_rank_ci ? number(m.mean_rank_ci->lo, fmt::format("[{:.2f}, {:.2f}]", m.mean_rank_ci->lo, m.mean_rank_ci->hi))
                                   : text("–"));
      if (m.normalised_iqm) {
        row.push_back(number(*m.normalised_iqm, fmt::format("{:.3f}", *m.normalised_iqm)));
        row.back().best = o.ranking->models.size() > 1 && *m.normalised_iqm == *best_iqm;
      } else {
        row.push_back(text("–"));
      }
      row.push_back(m.normalised_iqm_ci ? number(m.normalised_iqm_ci->lo, fmt::format("[{:.3f}, {:.3f}]", m.normalised_iqm_ci->lo,
                                                                                  m.normalised_iqm_ci->hi))
                                        : text("–"));
      row.push_back(count(o.units.size()));
      tab.rows.push_back(std::move(row));
    }
    tab.notes.push_back(fmt::format(
        "mean rank: average over the {} task/setting(s) of the rank by mean (1 = best); normalised IQM: interquartile mean of "
        "the per-task scores (model means mapped to [0, 1], 1 = best; {} task(s) separate the models); intervals: percentile "
        "bootstrap over seeds within each task ({} resamples, seed {}); {} best",
        o.units.size(), o.ranking->normalised_tasks, o.ranking->resamples, o.ranking->seed, kBestMark));
    tab.notes.push_back("tasks: " + join(o.units, "; "));
    for (const auto& l : o.left_out) tab.notes.push_back("left out (not on every task): " + l);
    out.push_back(std::move(tab));
  }
  return out;
}

}  // namespace lrb

