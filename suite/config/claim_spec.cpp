#include "suite/config/claim_spec.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "suite/config/claim_spec_detail.h"
#include "suite/config/expand.h"
#include "suite/contracts/figure_key.h"
#include "suite/contracts/figures.h"
#include "suite/core/text.h"

namespace lrb {

const char* claim_kind_name(ClaimKind k) {
  switch (k) {
    case ClaimKind::Better: return "better";
    case ClaimKind::NotWorse: return "not-worse";
    case ClaimKind::Scaling: return "scaling";
    case ClaimKind::Ratio: return "ratio";
    case ClaimKind::Dominates: return "dominates";
    case ClaimKind::Variance: return "variance";
  }
  return "?";
}

namespace claim_detail {

ClaimKind claim_kind_from(const std::string& s) {
  for (ClaimKind k : {ClaimKind::Better, ClaimKind::NotWorse, ClaimKind::Scaling, ClaimKind::Ratio, ClaimKind::Dominates,
                      ClaimKind::Variance})
    if (s == claim_kind_name(k)) return k;
  throw std::invalid_argument("unknown claim kind '" + s + "'");
}

bool has_variant(const json& spec, const std::string& name) {
  const json* list = spec_value_at(spec, "evaluate.variants");
  if (!list || !list->is_array()) return false;
  return std::any_of(list->begin(), list->end(), [&](const json& v) { return v.value("name", std::string()) == name; });
}

std::string path_name(const std::string& path) { return path.substr(path.rfind('.') + 1); }

}  // namespace claim_detail

namespace {

using claim_detail::claim_kind_from;
using claim_detail::has_variant;

// JSON numbers compare by value (a TOML 2 selects a run whose option is 2.0).
bool same_value(const json& a, const json& b) {
  // Two integers exactly: through a double, 2^53 + 1 would select a run of 2^53.
  if (a.is_number_integer() && b.is_number_integer()) return a == b;
  if (a.is_number() && b.is_number()) return a.get<double>() == b.get<double>();
  return a == b;
}

// Numbers as a reader writes them: 0.05, 1e-06, never "-0".
std::string number_text(double v) { return fmt::format("{:g}", v == 0 ? 0.0 : v); }

}  // namespace

bool CellSelector::matches(const json& run_spec) const {
  bool names_ranks = false;
  for (const auto& [path, v] : match) {
    const json* got = spec_value_at(run_spec, path);
    if (!got || !same_value(*got, v)) return false;
    names_ranks = names_ranks || path == "ranks_per_run";
  }
  // A sweep's selector names ranks_per_run when it is above 1 (the spec leaves it out at 1):
  // one that does not selects single-rank runs only, never a data-parallel run of the same cell.
  if (!names_ranks && run_spec.value("ranks_per_run", 1) != 1) return false;
  return variant.empty() || has_variant(run_spec, variant);
}

std::string CellSelector::metric_name(const std::string& metric) const {
  return variant.empty() ? metric : variant_metric(variant, metric);
}

json CellSelector::to_json() const {
  json m = json::array();
  for (const auto& [path, v] : match) m.push_back({{"path", path}, {"value", v}});
  json j = {{"match", m}, {"label", label}, {"where", where.str()}, {"expected_runs", expected_runs}};
  if (!variant.empty()) j["variant"] = variant;
  if (!expected_over.empty()) j["expected_over"] = expected_over;
  return j;
}

CellSelector CellSelector::from_json(const json& j) {
  CellSelector s;
  for (const auto& e : j.at("match")) s.match.emplace_back(e.at("path").get<std::string>(), e.at("value"));
  s.label = j.value("label", std::string());
  s.where.file = j.value("where", std::string());  // kept as text: "file:line:column"
  s.expected_runs = j.value("expected_runs", std::size_t{0});
  s.variant = j.value("variant", std::string());
  if (j.contains("expected_over")) s.expected_over = j.at("expected_over").get<std::vector<double>>();
  return s;
}

json ClaimSpec::to_json() const {
  json j = {{"name", name},           {"statement", statement}, {"source", source}, {"kind", claim_kind_name(kind)},
            {"metric", metric},       {"a", a.to_json()},       {"where", where.str()}};
  if (kind != ClaimKind::Scaling && !(kind == ClaimKind::Variance && b.match.empty())) j["b"] = b.to_json();
  if (kind == ClaimKind::Variance) {
    j["of"] = of;
    j["against"] = against;
  }
  if (kind == ClaimKind::Better || kind == ClaimKind::NotWorse || kind == ClaimKind::Dominates) j["margin"] = margin;
  if (kind == ClaimKind::Dominates) {
    j["cost"] = cost;
    j["factor"] = factor;
  }
  if (kind == ClaimKind::Scaling) {
    j["over"] = over;
    j["slope"] = {slope_lo, slope_hi};
  }
  if (at_most) j["at_most"] = *at_most;
  if (at_least) j["at_least"] = *at_least;
  return j;
}

json ClaimSpec::definition() const {
  json j = to_json();
  for (const char* words : {"statement", "source", "where"}) j.erase(words);
  for (const char* side : {"a", "b"})
    if (j.contains(side)) j[side].erase("where");  // where the file wrote it
  return j;
}

ClaimSpec ClaimSpec::from_json(const json& j) {
  ClaimSpec c;
  c.name = j.at("name");
  c.statement = j.at("statement");
  c.source = j.at("source");
  c.kind = claim_kind_from(j.at("kind"));
  c.metric = j.at("metric");
  c.where.file = j.value("where", std::string());
  c.a = CellSelector::from_json(j.at("a"));
  if (j.contains("b")) c.b = CellSelector::from_json(j.at("b"));
  c.margin = j.value("margin", 0.0);
  c.over = j.value("over", std::string());
  if (j.contains("slope")) {
    c.slope_lo = j.at("slope").at(0);
    c.slope_hi = j.at("slope").at(1);
  }
  if (j.contains("at_most")) c.at_most = j.at("at_most").get<double>();
  if (j.contains("at_least")) c.at_least = j.at("at_least").get<double>();
  c.cost = j.value("cost", std::string());
  c.factor = j.value("factor", 1.0);
  if (j.contains("of")) c.of = j.at("of").get<std::vector<std::string>>();
  if (j.contains("against")) c.against = j.at("against").get<std::vector<std::string>>();
  return c;
}

ClaimSpec ClaimSpec::metric_half() const {
  ClaimSpec h = *this;
  h.name = name + ":metric";
  h.kind = ClaimKind::NotWorse;
  h.cost.clear();
  h.factor = 1;
  return h;
}

ClaimSpec ClaimSpec::cost_half() const {
  ClaimSpec h = *this;
  h.name = name + ":cost";
  h.kind = ClaimKind::Ratio;
  h.metric = cost;
  h.margin = 0;
  h.at_most = 1.0 / factor;
  h.cost.clear();
  h.factor = 1;
  return h;
}

std::string cost_figure_name(const std::string& name) {
  static const std::map<std::string, std::string> names = {
      {"flops", "train_flops"},         {"train_flops", "train_flops"},         {"peak_step_bytes", "peak_step_bytes"},
      {"step_seconds", "step_seconds_median"}, {"step_seconds_median", "step_seconds_median"}, {"params", "params"}};
  const auto it = names.find(name);
  return it == names.end() ? std::string() : it->second;
}

const std::vector<std::string>& cost_figure_names() {
  static const std::vector<std::string> n = {"flops", "peak_step_bytes", "step_seconds", "params"};
  return n;
}

std::string ClaimSpec::claimed_text(bool higher_is_better) const {
  auto num = number_text;
  switch (kind) {
    case ClaimKind::Better:
      return higher_is_better ? "A − B > " + num(margin) : "A − B < " + num(-margin);
    case ClaimKind::NotWorse:  // a difference exactly at the margin is not worse by more than it
      return higher_is_better ? "A − B ≥ " + num(-margin) : "A − B ≤ " + num(margin);
    case ClaimKind::Scaling:
      return "slope in [" + num(slope_lo) + ", " + num(slope_hi) + "]";
    case ClaimKind::Ratio:
      if (at_most && at_least) return "A / B in [" + num(*at_least) + ", " + num(*at_most) + "]";
      if (at_most) return "A / B ≤ " + num(*at_most);
      return "A / B ≥ " + num(*at_least);
    case ClaimKind::Dominates:
      return metric_half().claimed_text(higher_is_better) + " and cost A / B ≤ " + num(1.0 / factor);
    case ClaimKind::Variance: {
      const std::string ratio = "V(" + join(of, ", ") + ") / V(" + (against.empty() ? "all" : join(against, ", ")) + ")";
      if (at_most && at_least) return ratio + " in [" + num(*at_least) + ", " + num(*at_most) + "]";
      if (at_most) return ratio + " ≤ " + num(*at_most);
      return ratio + " ≥ " + num(*at_least);
    }
  }
  return "?";
}

const std::vector<std::string>& claimable_run_figures() {
  // The runner's and the models' figures of the catalogue (one without a better side, such
  // as a chance level, only in a ratio claim: check_claims refuses better and not-worse).
  static const std::vector<std::string> f = [] {
    std::vector<std::string> names;
    for (const FigureDef& d : all_figures())
      if (!d.family && !d.task_metric)
        names.push_back(d.name);
    return names;
  }();
  return f;
}

std::string stored_metric_name(const std::string& metric) {
  if (spelled_as_variant_figure(metric)) return metric;
  // A run's or a model's figure of the catalogue, or a stored name ("eval_loss"), as it is;
  // anything else names a task metric.
  const FigureDef* f = find_figure(metric);
  if ((f && !f->task_metric) || FigureKey::parse(metric).kind == FigureKey::Kind::TaskMetric) return metric;
  return FigureKey::task_metric(metric).stored();
}

}  // namespace lrb
