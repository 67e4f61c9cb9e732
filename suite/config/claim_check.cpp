// check_claims: each claim against the expanded sweep (claim_spec.h).
#include "suite/config/claim_spec.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "suite/config/claim_spec_detail.h"
#include "suite/config/expand.h"
#include "suite/config/run_spec.h"
#include "suite/config/variant_spec.h"
#include "suite/contracts/figure_key.h"
#include "suite/contracts/figures.h"
#include "suite/core/seeds.h"
#include "suite/core/text.h"
#include "suite/registry/registry.h"

namespace lrb {

namespace {
using claim_detail::has_variant;
using claim_detail::path_name;
}  // namespace

namespace {

// The checks of one claim against the expanded sweep: each side selects the runs of exactly
// one cell, the metric is one those runs record, and each side learns what it expects.
class ClaimChecker {
 public:
  ClaimChecker(ClaimSpec& claim, const std::vector<RunSpec>& runs, bool measurement)
      : c(claim), runs(runs), measurement(measurement), section("[[claim]] '" + claim.name + "'") {}
  void check();

 private:
  void check_variant_named(const CellSelector& sel, const char* side) const;
  std::vector<const RunSpec*> cells_of(const CellSelector& sel, const char* side) const;
  [[noreturn]] void selects_nothing(const CellSelector& sel, const char* side) const;
  std::vector<const RunSpec*> one_cell(const CellSelector& sel, const char* side, const std::string& allowed_axis) const;
  void check_metric(const std::vector<const RunSpec*>& matched, const CellSelector& sel, const char* side) const;
  void check_variant_metric(const std::vector<const RunSpec*>& matched, const CellSelector& sel, const char* side) const;
  void check_direction() const;
  void check_variance();
  void check_streams_vary(const std::vector<const RunSpec*>& cell, const CellSelector& sel) const;

  ClaimSpec& c;
  const std::vector<RunSpec>& runs;
  const bool measurement;
  const std::string section;
};

// A side naming a variant: one that evaluates its runs (the variants they have are named,
// so a typo is obvious).
void ClaimChecker::check_variant_named(const CellSelector& sel, const char* side) const {
  if (sel.variant.empty()) return;
  CellSelector model_only;
  model_only.match = sel.match;
  std::set<std::string> declared;
  bool any = false;
  for (const auto& r : runs) {
    if (!model_only.matches(r.spec)) continue;
    if (has_variant(r.spec, sel.variant)) any = true;
    if (const json* list = spec_value_at(r.spec, "evaluate.variants"))
      for (const auto& v : *list) declared.insert(v.value("name", std::string()));
  }
  if (!any)
    throw UserError(sel.variant_where, "in " + section + ", '" + side + "' names variant '" + sel.variant +
                                           "', but no [[variant]] of that name evaluates its runs" +
                                           (declared.empty() ? std::string(" (they have no variants)")
                                                             : " (their variants: " + join({declared.begin(), declared.end()}, ", ") + ")"));
}

std::vector<const RunSpec*> ClaimChecker::cells_of(const CellSelector& sel, const char* side) const {
  check_variant_named(sel, side);
  std::vector<const RunSpec*> matched;
  for (const auto& r : runs)
    if (sel.matches(r.spec)) matched.push_back(&r);
  if (matched.empty()) selects_nothing(sel, side);
  return matched;
}

// Says which part of a selector selects nothing, and points at it, so the fix is obvious.
void ClaimChecker::selects_nothing(const CellSelector& sel, const char* side) const {
  std::string why;
  SourceLocation at = sel.where;
  for (std::size_t k = 1; k <= sel.match.size() && why.empty(); ++k) {
    CellSelector prefix;
    prefix.match.assign(sel.match.begin(), sel.match.begin() + static_cast<std::ptrdiff_t>(k));
    bool any = false;
    std::set<std::string> values;
    for (const auto& r : runs) {
      CellSelector before;
      before.match.assign(sel.match.begin(), sel.match.begin() + static_cast<std::ptrdiff_t>(k - 1));
      if (!before.matches(r.spec)) continue;
      if (prefix.matches(r.spec)) any = true;
      if (const json* v = spec_value_at(r.spec, sel.match[k - 1].first)) values.insert(setting_text(*v));
    }
    if (!any) {
      why = "no run has " + path_name(sel.match[k - 1].first) + " = " + setting_text(sel.match[k - 1].second) +
            (values.empty() ? std::string() : " (the sweep has: " + join({values.begin(), values.end()}, ", ") + ")");
      if (k - 1 < sel.match_where.size()) at = sel.match_where[k - 1];
    }
  }
  throw UserError(at, "in " + section + ", '" + side + "' (" + sel.label + ") selects no run of this sweep: " + why);
}

std::vector<const RunSpec*> ClaimChecker::one_cell(const CellSelector& sel, const char* side, const std::string& allowed_axis) const {
  auto matched = cells_of(sel, side);
  std::vector<json> specs;
  for (const auto* r : matched) specs.push_back(r->spec);
  std::vector<std::string> varying = varying_paths(specs);
  std::vector<std::string> extra;
  for (const auto& p : varying)
    if (p != allowed_axis) extra.push_back(path_name(p));
  // Runs from several [[task]] tables differ in task.name, which varying_paths does not list.
  std::set<std::string> task_names;
  for (const auto* r : matched) task_names.insert(r->task_name());
  if (task_names.size() > 1) extra.insert(extra.begin(), "task");
  if (!extra.empty())
    throw UserError(sel.where, "in " + section + ", '" + side + "' (" + sel.label + ") selects runs of several cells: they differ in " +
                                   join(extra, ", ") + "; fix " + (extra.size() > 1 ? "them" : "it") + " in '" + side +
                                   "' or in 'where'");
  return matched;
}

// A figure each evaluation variant records: the side names a variant, whose [evaluate]
// records that figure.
void ClaimChecker::check_variant_metric(const std::vector<const RunSpec*>& matched, const CellSelector& sel, const char* side) const {
  if (sel.variant.empty())
    throw UserError(c.metric_where, "in " + section + ", '" + c.metric + "' is recorded for each evaluation variant: give '" + side +
                                        "' a variant = \"<[[variant]] name>\" (a variant with the model's default settings "
                                        "measures the model as trained)");
  for (const auto* r : matched)
    if (!is_variant_figure(c.metric, r->spec.at("evaluate")))
      throw UserError(c.metric_where, "in " + section + ", variants record no '" + c.metric + "': they record infer_peak_bytes_b<B>, "
                                          "infer_seconds_b<B> and infer_samples_per_s_b<B> for the batch sizes of [evaluate] (" +
                                          r->spec.at("evaluate").at("batch_sizes").dump() +
                                          "), probe_<name>_cosine, _mean_shift and _var_ratio, eval_loss and the task's metrics");
}

void ClaimChecker::check_metric(const std::vector<const RunSpec*>& matched, const CellSelector& sel, const char* side) const {
  if (spelled_as_variant_figure(c.metric)) return check_variant_metric(matched, sel, side);
  const auto& figures = claimable_run_figures();
  const bool run_figure = std::find(figures.begin(), figures.end(), c.metric) != figures.end();
  if (!sel.variant.empty() && run_figure && c.metric != "eval_loss")
    throw UserError(c.metric_where, "in " + section + ", '" + side + "' selects variant '" + sel.variant + "', which records the task's metrics, "
                                        "eval_loss and inference figures (infer_*, probe_*), not '" + c.metric + "'");
  if (run_figure) {
    if (measurement && (c.metric == "eval_loss" || c.metric == "train_loss"))
      throw UserError(c.metric_where, "in " + section + ", this sweep measures ([measure]) and does not train: '" +
                                          c.metric + "' is not recorded; claim a figure such as peak_bytes or step_seconds_median");
    if (!measurement && (c.metric == "max_batch_in_budget" || c.metric == "attention_peak_bytes" || c.metric == "form_gap"))
      throw UserError(c.metric_where, "in " + section + ", '" + c.metric + "' is recorded by measurement sweeps ([measure]" +
                                          (c.metric == "max_batch_in_budget" ? " with a budget)" : ")"));
    return;
  }
  const std::string name = FigureKey::parse(c.metric).name;  // a task metric
  for (const auto* r : matched) {
    const auto& m = r->task_info.metrics;
    if (std::find(m.begin(), m.end(), name) == m.end()) {
      std::vector<std::string> known = m;
      known.insert(known.end(), figures.begin(), figures.end());
      throw UserError(c.metric_where, "in " + section + ", task '" + r->task_name() + "' has no metric '" + name + "'" +
                                          suggestion(name, known));
    }
  }
  if (measurement)
    throw UserError(c.metric_where, "in " + section + ", this sweep measures ([measure]) and does not train: '" + name +
                                        "' is not recorded; claim a figure such as peak_bytes or step_seconds_median");
}

// Better and not-worse need a better side (the figure catalogue's direction).
void ClaimChecker::check_direction() const {
  const FigureDef* figure = find_figure(c.metric);
  const bool directed_kind = c.kind == ClaimKind::Better || c.kind == ClaimKind::NotWorse || c.kind == ClaimKind::Dominates;
  if (directed_kind && figure && figure->direction == Direction::None)
    throw UserError(c.metric_where, "in " + section + ", '" + c.metric + "' has no better side (" + figure->recorded_by +
                                        " records it; neither larger nor smaller is better), so '" + claim_kind_name(c.kind) +
                                        "' cannot be judged: claim a ratio with at_least and at_most instead");
}

// A variance claim's streams each take two or more indices among the cell's runs (vary), and
// `of` is not every stream they vary when `against` means all of them.
void ClaimChecker::check_streams_vary(const std::vector<const RunSpec*>& cell, const CellSelector& sel) const {
  std::vector<std::string> varied;
  for (const auto& s : kStreams) {
    std::set<std::int64_t> indices;
    for (const auto* r : cell) indices.insert(r->stream_index(s.name));
    if (indices.size() > 1) varied.emplace_back(s.name);
  }
  const auto check = [&](const std::vector<std::string>& names, const SourceLocation& at) {
    for (const auto& n : names)
      if (std::find(varied.begin(), varied.end(), n) == varied.end())
        throw UserError(at, "in " + section + ", the runs of '" + sel.label + "' hold the " + n + " stream at one index, so no "
                                "study of them varies it" + (varied.empty() ? std::string() : " (they vary: " + join(varied, ", ") + ")") +
                                "; cross it in [sweep] vary = { " + n + " = 3, ... }");
  };
  check(c.of, c.of_where);
  check(c.against, c.against_where);
  if (varied.size() < 2)
    throw UserError(c.where, "in " + section + ", the runs of '" + sel.label + "' vary " +
                                 (varied.empty() ? std::string("no stream") : "only " + varied.front()) +
                                 ": a variance claim reads a crossing of two or more streams ([sweep] vary)");
  if (c.against.empty() && std::all_of(varied.begin(), varied.end(), [&](const std::string& n) {
        return std::find(c.of.begin(), c.of.end(), n) != c.of.end();
      }))
    throw UserError(c.of_where, "in " + section + ", 'of' names every stream the cell varies, and 'against' (all of them) too: "
                                    "their ratio is 1 by definition");
}

void ClaimChecker::check_variance() {
  auto a = one_cell(c.a, "a", "");
  check_metric(a, c.a, "a");
  check_streams_vary(a, c.a);
  c.a.expected_runs = a.size();
  if (c.b.match.empty()) return;
  auto b = one_cell(c.b, "b", "");
  check_metric(b, c.b, "b");
  if (a.front()->key == b.front()->key && c.a.variant == c.b.variant)
    throw UserError(c.b.where, "in " + section + ", 'a' and 'b' select the same cell; a claim compares two different cells");
  c.b.expected_runs = b.size();
}

void ClaimChecker::check() {
  check_direction();
  if (c.kind == ClaimKind::Variance) return check_variance();
  if (c.kind == ClaimKind::Scaling) {
    auto matched = one_cell(c.a, "a", c.over);
    std::set<double> xs;
    for (const auto* r : matched) xs.insert(spec_value_at(r->spec, c.over)->get<double>());
    if (xs.size() < 3)
      throw UserError(c.a.where, "in " + section + ", '" + path_name(c.over) + "' takes " + std::to_string(xs.size()) +
                                     " value(s) among the runs of '" + c.a.label + "'; a slope with an interval needs at least 3");
    check_metric(matched, c.a, "a");
    c.a.expected_runs = matched.size();
    c.a.expected_over.assign(xs.begin(), xs.end());
    return;
  }
  auto a = one_cell(c.a, "a", "");
  auto b = one_cell(c.b, "b", "");
  c.a.expected_runs = a.size();
  c.b.expected_runs = b.size();
  // The same runs under two variants are two cells: one set of weights, run two ways.
  if ((a.front()->key == b.front()->key || (a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin()))) &&
      c.a.variant == c.b.variant)
    throw UserError(c.b.where, "in " + section + ", 'a' and 'b' select the same cell; a claim compares two different cells");
  check_metric(a, c.a, "a");
  check_metric(b, c.b, "b");
  if (c.kind == ClaimKind::Dominates && measurement && c.cost == "train_flops")
    throw UserError(c.where, "in " + section + ", this sweep measures ([measure]) and does not train: 'train_flops' is not "
                                                "recorded; claim a cost such as peak_step_bytes, step_seconds or params");
}

}  // namespace

void check_claims(std::vector<ClaimSpec>& claims, const std::vector<RunSpec>& runs, bool measurement) {
  for (auto& c : claims) ClaimChecker(c, runs, measurement).check();
}

}  // namespace lrb
