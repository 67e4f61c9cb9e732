// A task's paired comparisons, by seed.
#include "suite/report/task_tables.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "suite/config/run_streams.h"
#include "suite/core/text.h"
#include "suite/report/report_tables.h"
#include "suite/report/table_cells.h"
#include "suite/report/text_format.h"
#include "suite/report/variance_sources.h"

namespace lrb::task_tables {

using namespace table_cells;

namespace {

std::string seeds_text(const std::vector<std::int64_t>& seeds) {
  std::vector<std::string> s;
  for (auto x : seeds) {  // a seed index, or a tuple of stream indices in parentheses
    const std::string label = replicate_label(x);
    s.push_back(label.rfind("seed ", 0) == 0 ? label.substr(5) : "(" + label + ")");
  }
  return join(s, " ");
}

}  // namespace

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

}  // namespace lrb::task_tables
