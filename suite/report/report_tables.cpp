#include "suite/report/report_tables.h"

#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join (in fmt/format.h only up to fmt 10)

#include <algorithm>
#include <cmath>

#include "suite/config/run_streams.h"
#include "suite/core/text.h"
#include "suite/report/efficiency.h"
#include "suite/report/claims/claim_tables.h"
#include "suite/report/claims/claims.h"
#include "suite/report/cost_tables.h"
#include "suite/report/table_cells.h"
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

TableCell value(const std::optional<double>& v, std::size_t n) {
  if (v) return number(*v, format_value(*v));
  return text(n == 1 ? "n=1" : "–");
}
TableCell p_value(const std::optional<double>& p, std::size_t n) {
  if (!p) return text(n == 1 ? "n=1" : "–");
  return number(*p, format_p(*p));
}

std::string rank_text(const CellResult& c, const Unit& u, const std::vector<CellResult>& cells) {
  if (!c.rank) return "–";
  std::size_t members = 0;
  for (std::size_t i : u.cells)
    if (cells[i].rank && cells[i].rank->group == c.rank->group) ++members;
  return std::to_string(c.rank->group_rank) + (members > 1 ? "=" : "");
}

TableCell mean_std(const CellResult& c) {
  const auto& s = c.summary;
  if (s.n == 0) {
    TableCell t = text("no result");
    t.alert = true;
    return t;
  }
  if (s.n == 1) return number(*s.mean, format_value(*s.mean));
  return number(*s.mean, format_value(*s.mean) + " ± " + format_value(*s.std));
}

std::string bootstrap_note(const stats::BootstrapSettings& b) {
  return fmt::format("{} resamples, seed {}", b.resamples, b.seed);
}

std::string ranking_rule(const ReportOptions& o) {
  return fmt::format("rank: tie groups — models not significantly worse than their group's leader (paired t-test by seed, "
                     "{}-adjusted, α = {}) share its rank; \"1=\" marks a shared rank, \"–\" no result to rank",
                     correction_label(o.correction), o.alpha);
}

std::string problem_note(const Cell& c, const RunProblem& p) {
  return c.entrant + (c.condition_label.empty() ? "" : " " + c.condition_label) + ", " + replicate_label(p.seed) + " " +
         p.status + ": " + (p.reason.empty() ? "(no reason recorded)" : p.reason);
}

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

Table spread_table(const Analysis& a, const TaskResult& t) {
  const std::string m = display_metric(t.metric);
  Table tab;
  tab.id = "spread-" + slug(t.task);
  tab.task = t.task;
  tab.title = fmt::format("{} — {} over seeds: spread", t.task, m);
  tab.columns = {"model", "setting", "sem", "95% CI (percentile)", "median", "IQR", "IQM", "min", "max", "n"};
  bool any_caution = false;
  for (std::size_t u : t.units)
    for (std::size_t i : a.units[u].cells) {
      const CellResult& c = a.cells[i];
      const auto& s = c.summary;
      std::vector<TableCell> row;
      row.push_back(text(c.cell.entrant));
      row.push_back(text(c.cell.condition_label.empty() ? "-" : c.cell.condition_label));
      row.push_back(value(s.sem, s.n));
      const bool caution = s.n >= 2 && s.n < kMinBootstrapN;
      any_caution = any_caution || caution;
      row.push_back(s.n == 0 ? text("–") : interval(s.bootstrap.percentile, s.n, caution));
      for (const auto& v : {s.median, s.iqr, s.iqm, s.min, s.max}) row.push_back(v ? number(*v, format_value(*v)) : text("–"));
      row.push_back(count(s.n));
      tab.rows.push_back(std::move(row));
      tab.row_keys.push_back(cell_key(i));
    }
  tab.notes.push_back(fmt::format(
      "sem: standard error of the mean; 95% CI (percentile): bootstrap percentile interval of the mean ({}); median, IQR "
      "(q3 − q1, linear quantiles), IQM (mean of the middle 50 %), min and max over the seeds' values",
      bootstrap_note(a.options.bootstrap)));
  if (any_caution)
    tab.notes.push_back(fmt::format("{} n < {}: the bootstrap interval undercovers; read the t interval", kCautionMark, kMinBootstrapN));
  return tab;
}

std::string seeds_text(const std::vector<std::int64_t>& seeds) {
  std::vector<std::string> s;
  for (auto x : seeds) {  // a seed index, or a tuple of stream indices in parentheses
    const std::string label = replicate_label(x);
    s.push_back(label.rfind("seed ", 0) == 0 ? label.substr(5) : "(" + label + ")");
  }
  return join(s, " ");
}

Table comparison_table(const Analysis& a, const TaskResult& t) {
  const bool baseline_mode = !a.options.baseline.empty();
  const std::string corr = correction_label(a.options.correction);
  Table tab;
  tab.id = "comparisons-" + slug(t.task);
  tab.title = baseline_mode ? fmt::format("{} — paired comparisons with the baseline {}, by seed", t.task, a.options.baseline)
                            : fmt::format("{} — paired comparisons, all pairs, by seed", t.task);
  tab.columns = {"model", baseline_mode ? "baseline" : "vs", "setting", "pairs", "Δ mean", "95% CI (paired t)",
                 "95% CI (BCa)", "p (t)", "p (Wilcoxon)", "p (" + corr + ")", "effect size", "P(better)", "unpaired seeds"};
  bool any_caution = false, any_unpaired = false;
  for (std::size_t k : t.comparisons) {
    const ComparisonResult& cmp = a.comparisons[k];
    const auto& p = cmp.paired;
    const Cell& ca = a.cells[cmp.a].cell;
    const Cell& cb = a.cells[cmp.b].cell;
    std::vector<TableCell> row;
    row.push_back(text(ca.entrant));
    row.push_back(text(cb.entrant));
    row.push_back(text(ca.condition_label.empty() ? "-" : ca.condition_label));
    row.push_back(count(p.n_pairs));
    if (p.mean_diff) {
      row.push_back(number(*p.mean_diff, format_signed(*p.mean_diff)));
      row.back().marked = cmp.significant;
    } else {
      row.push_back(text("no pairs"));
      row.back().alert = true;
    }
    row.push_back(p.n_pairs == 0 ? text("–") : interval(p.t.ci, p.n_pairs));
    const bool caution = p.n_pairs >= 2 && p.n_pairs < kMinBootstrapN;
    any_caution = any_caution || caution;
    row.push_back(p.n_pairs == 0 ? text("–") : interval(p.bootstrap.bca, p.n_pairs, caution));
    row.push_back(p_value(p.t.p_value, p.n_pairs));
    row.push_back(p_value(p.wilcoxon.p_value, p.n_pairs));
    row.push_back(p_value(cmp.p_shown, p.n_pairs));
    row.push_back(value(p.effect_size, p.n_pairs));
    row.push_back(p.prob_improvement ? number(*p.prob_improvement, fmt::format("{:.2f}", *p.prob_improvement)) : text("–"));
    std::vector<std::string> unpaired;
    if (!p.only_a.empty()) unpaired.push_back("only " + ca.entrant + ": " + seeds_text(p.only_a));
    if (!p.only_b.empty()) unpaired.push_back("only " + cb.entrant + ": " + seeds_text(p.only_b));
    row.push_back(text(unpaired.empty() ? "-" : join(unpaired, "; ")));
    row.back().alert = !unpaired.empty();
    any_unpaired = any_unpaired || !unpaired.empty();
    tab.rows.push_back(std::move(row));
  }
  tab.notes.push_back(fmt::format(
      "Δ = {} per seed, over the seeds both ran; 95% CI (paired t) and 95% CI (BCa, {}) of the mean Δ; p (t): paired t-test; "
      "p (Wilcoxon): signed-rank test (exact for small n without ties)",
      baseline_mode ? "model − baseline" : "model − vs (the better-ranked of the pair first)", bootstrap_note(a.options.bootstrap)));
  tab.notes.push_back(fmt::format(
      "p ({}): the paired-t p-values adjusted with {} over the {} comparison(s) of this table ({}); "
      "the JSON and CSV reports carry both Holm and Benjamini–Hochberg",
      corr, corr, t.comparisons.size(),
      a.options.correction == stats::Correction::kBenjaminiHochberg ? "false discovery rate" : "family-wise error"));
  tab.notes.push_back(fmt::format("{} significant: p ({}) ≤ {}; effect size: mean Δ / sd Δ; P(better): share of paired seeds "
                                  "where the model is better (ties count ½)",
                                  kSignificantMark, corr, a.options.alpha));
  if (any_caution)
    tab.notes.push_back(fmt::format("{} fewer than {} pairs: the bootstrap interval undercovers", kCautionMark, kMinBootstrapN));
  if (any_unpaired) tab.notes.push_back("unpaired seeds: seeds with a value on one side only (failed, stopped or not run on the other); listed, not used");
  for (auto& note : left_out_notes(a, t.comparisons)) tab.notes.push_back(std::move(note));
  return tab;
}

// A task where no cell has a value of its metric: a measurement sweep (or nothing finished).
bool no_metric_values(const Analysis& a, const TaskResult& t) {
  for (std::size_t u : t.units)
    for (std::size_t i : a.units[u].cells)
      if (!a.cells[i].cell.values.empty()) return false;
  return true;
}

// The efficiency figures some cell of the task has (a breakdown figure only when asked for).
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

}  // namespace

std::string scaling_reading(const stats::LineFit& f) {
  if (!f.slope_ci) return "–";
  const auto& ci = *f.slope_ci;
  // Near k: the interval reaches within the practical tolerance of slope k.
  auto near = [&](double k) { return ci.lo <= k + kSlopeTolerance && ci.hi >= k - kSlopeTolerance; };
  std::vector<std::string> readings;
  if (near(0)) readings.push_back("constant");
  if (near(1)) readings.push_back("linear");
  if (near(2)) readings.push_back("quadratic");
  if (readings.size() == 1) return readings.front();
  if (readings.size() > 1) return "undecided (" + join(readings, " or ") + ")";
  if (ci.hi < 1) return "sublinear";
  if (ci.lo > 2) return "superquadratic";
  return "between linear and quadratic";
}

namespace {

std::optional<Table> scaling_table(const Analysis& a, const TaskResult& t) {
  if (t.scaling.empty()) return std::nullopt;
  Table tab;
  tab.id = "scaling-" + slug(t.task);
  tab.title = t.task + " — scaling with N (sequence length), log-log least squares";
  tab.columns = {"model", "setting", "figure", "N", "lengths", "points", "slope", "95% CI", "R²", "reading"};
  for (std::size_t k : t.scaling) {
    const ScalingResult& s = a.scaling[k];
    double lo = s.points.front().first, hi = lo;
    for (const auto& p : s.points) {
      lo = std::min(lo, p.first);
      hi = std::max(hi, p.first);
    }
    std::vector<TableCell> row;
    row.push_back(text(s.entrant));
    row.push_back(text(s.condition_label.empty() ? "-" : s.condition_label));
    row.push_back(text(s.metric == "peak_bytes"            ? "peak memory"
                       : s.metric == "peak_step_bytes"     ? "step memory"
                       : s.metric == "attention_peak_bytes" ? "attention memory"
                       : s.metric == "step_seconds_median" ? "step time"
                                                           : s.metric));
    row.push_back(text(fmt::format("{:.0f}–{:.0f}", lo, hi)));
    row.push_back(count(s.lengths));
    row.push_back(count(s.points.size()));
    row.push_back(number(s.fit.slope, fmt::format("{:.3f}", s.fit.slope)));
    if (s.fit.slope_ci)
      row.push_back(number(s.fit.slope_ci->lo, fmt::format("[{:.3f}, {:.3f}]", s.fit.slope_ci->lo, s.fit.slope_ci->hi)));
    else
      row.push_back(text("–"));
    row.push_back(number(s.fit.r_squared, fmt::format("{:.3f}", s.fit.r_squared)));
    row.push_back(text(scaling_reading(s.fit)));
    tab.rows.push_back(std::move(row));
  }
  tab.notes.push_back(fmt::format(
      "slope of log(figure) against log(N) by least squares over every ok run (seeds are points), with its {:.0f} % interval "
      "(t, n − 2 df); reading: constant, linear or quadratic when the interval comes within ±{:.2g} of a slope of 0, 1 or 2 "
      "(a practical tolerance), sub- or superlinear only when it stays clear of all of them; "
      "figures: peak memory, step memory (a training step's own peak: activations, beyond the resident parameters, gradients and optimizer state) and median step time; fits need 3 or more distinct lengths",
      a.options.bootstrap.confidence * 100, kSlopeTolerance));
  return tab;
}

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
