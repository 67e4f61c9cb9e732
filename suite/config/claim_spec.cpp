#include "suite/config/claim_spec.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "suite/config/expand.h"
#include "suite/config/run_spec.h"
#include "suite/config/sweep_spec.h"
#include "suite/config/variant_spec.h"
#include "suite/contracts/figures.h"
#include "suite/core/files.h"
#include "suite/core/text.h"
#include "suite/registry/registry.h"

namespace lrb {

const char* claim_kind_name(ClaimKind k) {
  switch (k) {
    case ClaimKind::Better: return "better";
    case ClaimKind::NotWorse: return "not-worse";
    case ClaimKind::Scaling: return "scaling";
    case ClaimKind::Ratio: return "ratio";
    case ClaimKind::Dominates: return "dominates";
  }
  return "?";
}

namespace {

ClaimKind claim_kind_from(const std::string& s) {
  for (ClaimKind k : {ClaimKind::Better, ClaimKind::NotWorse, ClaimKind::Scaling, ClaimKind::Ratio, ClaimKind::Dominates})
    if (s == claim_kind_name(k)) return k;
  throw std::invalid_argument("unknown claim kind '" + s + "'");
}

// JSON numbers compare by value (a TOML 2 selects a run whose option is 2.0).
bool same_value(const json& a, const json& b) {
  // Two integers exactly: through a double, 2^53 + 1 would select a run of 2^53.
  if (a.is_number_integer() && b.is_number_integer()) return a == b;
  if (a.is_number() && b.is_number()) return a.get<double>() == b.get<double>();
  return a == b;
}

std::string value_text(const json& v) { return setting_text(v); }

bool has_variant(const json& spec, const std::string& name) {
  const json* list = spec_value_at(spec, "evaluate.variants");
  if (!list || !list->is_array()) return false;
  return std::any_of(list->begin(), list->end(), [&](const json& v) { return v.value("name", std::string()) == name; });
}

SourceLocation key_at(const toml::key& k, const std::string& file) {
  return SourceLocation{file, static_cast<int>(k.source().begin.line), static_cast<int>(k.source().begin.column)};
}

const std::vector<std::string> kClaimKeys = {"name", "statement", "source", "kind",    "metric",   "task", "where", "a",
                                             "b",    "margin",    "over",   "slope",   "at_most",  "at_least", "cost", "factor"};
const std::vector<std::string> kClaimKinds = {"better", "not-worse", "scaling", "ratio", "dominates"};

std::string required_string(const toml::table& t, const std::string& key, const std::string& file, const std::string& section,
                            const std::string& what) {
  const toml::node* n = t.get(key);
  if (!n) throw UserError(location_of(t, file), section + " needs '" + key + "' (" + what + ")");
  auto s = n->as_string();
  if (!s || s->get().empty()) throw UserError(location_of(*n, file), "in " + section + ", '" + key + "' must be a non-empty string (" + what + ")");
  return s->get();
}

// A claim's numbers are bounded so that sums of seeds' differences stay finite: 1e15 is past
// every metric lrbench measures (a petabyte in bytes, eleven days in nanoseconds).
constexpr double kLargestClaimNumber = 1e15;

double number_at(const toml::node& n, const std::string& file, const std::string& section, const std::string& key) {
  double v = std::numeric_limits<double>::quiet_NaN();
  if (auto i = n.as_integer()) v = static_cast<double>(i->get());
  if (auto f = n.as_floating_point()) v = f->get();
  if (std::isfinite(v) && std::fabs(v) <= kLargestClaimNumber) return v;
  throw UserError(location_of(n, file), "in " + section + ", '" + key + "' must be a finite number from -1e15 to 1e15");
}

// Resolves the keys of one selector table (a, b or where) into spec paths.
class SelectorReader {
 public:
  SelectorReader(std::string file, std::string section, std::vector<std::string> sweep_tasks)
      : file_(std::move(file)), section_(std::move(section)), sweep_tasks_(std::move(sweep_tasks)) {}

  // `model`: the side's model ("" for `where`). Appends to `out`.
  void read(const toml::table& t, const std::string& model, const std::string& task, const std::string& what,
            CellSelector& sel) const {
    auto& out = sel.match;
    const std::size_t before = out.size();
    const ModelEntry* m = model.empty() ? nullptr : ModelRegistry::instance().find(model);
    for (const auto& [k, node] : t) {
      const std::string key(k.str());
      const SourceLocation at = key_at(k, file_);
      const std::string where = "in " + section_ + ", " + what;
      if (key == "model" || key == "task") continue;  // read by the caller
      if (key == "variant") {
        if (model.empty())
          throw UserError(at, where + ": name the variant in 'a' or 'b' (variant = \"<[[variant]] name>\"), not in 'where'");
        auto v = node.as_string();
        if (!v || v->get().empty())
          throw UserError(location_of(node, file_), where + ": 'variant' must be the name of a [[variant]] (a string)");
        sel.variant = v->get();
        sel.variant_where = location_of(node, file_);
        continue;
      }
      if (node.is_array() || node.is_table())
        throw UserError(location_of(node, file_), where + ": '" + key + "' selects one value; a claim compares single cells "
                                                          "(write one claim per value)");
      if (key == "seq_len") {
        static const OptionSpec seq_len{"seq_len", OptionType::Int, json(), "input length in tokens", {}, 1, 1 << 24};
        out.emplace_back("task.seq_len", read_value(node, seq_len, file_, section_));
        continue;
      }
      if (m) {
        if (const OptionSpec* o = m->schema.find(key)) {
          out.emplace_back("model.options." + key, read_value(node, *o, file_, section_ + " (model '" + model + "')"));
          continue;
        }
      }
      bool found = false;
      std::vector<std::string> candidates = {"model", "task", "seq_len", "variant"};
      if (m) {
        auto names = m->schema.names();
        candidates.insert(candidates.end(), names.begin(), names.end());
      }
      for (const auto& tn : task.empty() ? sweep_tasks_ : std::vector<std::string>{task}) {
        const TaskEntry* te = TaskRegistry::instance().find(tn);
        if (!te) continue;
        if (const OptionSpec* o = te->schema.find(key)) {
          out.emplace_back("task.options." + key, read_value(node, *o, file_, section_ + " (task '" + tn + "')"));
          found = true;
          break;
        }
        auto names = te->schema.names();
        candidates.insert(candidates.end(), names.begin(), names.end());
      }
      if (found) continue;
      if (const OptionSpec* o = train_schema().find(key)) {
        out.emplace_back("train." + key, read_value(node, *o, file_, section_ + " ([train])"));
        continue;
      }
      auto train_names = train_schema().names();
      candidates.insert(candidates.end(), train_names.begin(), train_names.end());
      throw UserError(at, where + ": '" + key + "' is not an option of " +
                              (m ? "model '" + model + "', " : std::string()) + "the sweep's tasks or [train]" +
                              suggestion(key, candidates));
    }
    // One location per pair read here, in the order they were read (the table's order).
    for (const auto& [key, node] : t)
      if (key.str() != "model" && key.str() != "task" && key.str() != "variant") sel.match_where.push_back(location_of(node, file_));
    LRB_CHECK(sel.match_where.size() == out.size() && out.size() >= before, "selector locations out of step");
  }

 private:
  std::string file_, section_;
  std::vector<std::string> sweep_tasks_;
};

std::string selector_label(const std::vector<std::pair<std::string, json>>& match) {
  std::string model, task, rest;
  for (const auto& [path, v] : match) {
    if (path == "model.name") model = value_text(v);
    else if (path == "task.name") task = value_text(v);
    else {
      const auto dot = path.rfind('.');
      rest += " " + path.substr(dot + 1) + "=" + value_text(v);
    }
  }
  return model + (task.empty() ? "" : " on " + task) + rest;
}

std::string path_name(const std::string& path) { return path.substr(path.rfind('.') + 1); }

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
  if (kind != ClaimKind::Scaling) j["b"] = b.to_json();
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
  if (metric.rfind("infer_", 0) == 0 || metric.rfind("probe_", 0) == 0) return metric;  // variant figures
  // A run's or a model's figure of the catalogue, or a stored name ("eval_loss"), as it is;
  // anything else names a task metric.
  const FigureDef* f = find_figure(metric);
  if ((f && !f->task_metric) || metric.rfind("eval_", 0) == 0) return metric;
  return "eval_" + metric;
}

namespace {

// One [[claim]] table read into a ClaimSpec: its identity, the keys its kind takes, the task
// and 'where' shared by its sides, and each side's cell selector.
class ClaimTableReader {
 public:
  ClaimTableReader(const toml::table& t, const std::string& file) : t_(t), file_(file) {}

  ClaimSpec read(std::set<std::string>& names) {
    c_.where = location_of(t_, file_);
    for (const auto& [k, node] : t_) {
      const std::string key(k.str());
      if (std::find(kClaimKeys.begin(), kClaimKeys.end(), key) == kClaimKeys.end())
        throw UserError(key_at(k, file_), "unknown key '" + key + "' in [[claim]]" + suggestion(key, kClaimKeys));
    }
    read_identity(names);
    if (c_.kind != ClaimKind::Dominates) {
      forbid("cost", "it is a key of a dominates claim");
      forbid("factor", "it is a key of a dominates claim");
    }
    if (c_.kind == ClaimKind::Better || c_.kind == ClaimKind::NotWorse)
      read_paired_keys();
    else if (c_.kind == ClaimKind::Scaling)
      read_scaling_keys();
    else if (c_.kind == ClaimKind::Ratio)
      read_ratio_keys();
    else
      read_dominates_keys();
    read_task_and_where();
    c_.a = side("a");
    if (c_.kind != ClaimKind::Scaling) c_.b = side("b");
    return std::move(c_);
  }

 private:
  void read_identity(std::set<std::string>& names) {
    c_.name = required_string(t_, "name", file_, "[[claim]]", "a short identifier, e.g. \"maelre-beats-transformer\"");
    if (!is_safe_name(c_.name) || c_.name.size() > 128)
      throw UserError(location_of(*t_.get("name"), file_),
                      "in [[claim]], 'name' may use only letters, digits, '.', '_' and '-' (at most 128 characters)");
    if (!names.insert(c_.name).second)
      throw UserError(location_of(*t_.get("name"), file_), "a claim named '" + c_.name + "' is already declared; names must be unique");
    section_ = "[[claim]] '" + c_.name + "'";
    c_.statement = required_string(t_, "statement", file_, section_, "the claim in words");
    c_.source = required_string(t_, "source", file_, section_, "where it comes from, e.g. \"MAELRE (arXiv 2507.19409), Table 1\"");
    kind_ = required_string(t_, "kind", file_, section_, "better, not-worse, scaling, ratio or dominates");
    try {
      c_.kind = claim_kind_from(kind_);
    } catch (const std::invalid_argument&) {
      throw UserError(location_of(*t_.get("kind"), file_),
                      "in " + section_ + ", 'kind' has no value \"" + kind_ + "\"" +
                          suggestion(kind_, kClaimKinds));
    }
    const std::string metric = required_string(t_, "metric", file_, section_,
                                               "a task metric such as \"accuracy\", or a run figure such as \"peak_bytes\"");
    c_.metric = stored_metric_name(metric);
    c_.metric_where = location_of(*t_.get("metric"), file_);
  }

  // The kind decides which keys belong.
  void forbid(const char* key, const std::string& why) const {
    if (const toml::node* n = t_.get(key))
      throw UserError(location_of(*n, file_), "in " + section_ + ", '" + key + "' does not apply to a " + kind_ + " claim (" + why + ")");
  }
  const toml::node& need(const char* key, const std::string& what) const {
    const toml::node* n = t_.get(key);
    if (!n) throw UserError(c_.where, section_ + " (" + kind_ + ") needs '" + key + "' (" + what + ")");
    return *n;
  }

  void read_paired_keys() {
    forbid("over", "it compares two cells");
    forbid("slope", "it compares two cells");
    forbid("at_most", "use kind = \"ratio\" for a factor");
    forbid("at_least", "use kind = \"ratio\" for a factor");
    if (const toml::node* n = t_.get("margin")) {
      c_.margin = number_at(*n, file_, section_, "margin");
      if (c_.margin < 0)
        throw UserError(location_of(*n, file_), "in " + section_ + ", 'margin' must not be negative (it is a distance, in the metric's units)");
    }
    if (c_.kind == ClaimKind::NotWorse && !(c_.margin > 0))
      throw UserError(t_.get("margin") ? location_of(*t_.get("margin"), file_) : c_.where,
                      section_ + ": a not-worse claim needs 'margin' > 0 (how much worse still counts as not worse, in the metric's units)");
  }

  void read_scaling_keys() {
    forbid("b", "it follows one model's cells over 'over'");
    forbid("margin", "it claims a slope");
    forbid("at_most", "use 'slope' = [lo, hi]");
    forbid("at_least", "use 'slope' = [lo, hi]");
    const toml::node& over = need("over", "\"seq_len\" or \"batch_size\"");
    auto s = over.as_string();
    if (!s || (s->get() != "seq_len" && s->get() != "batch_size"))
      throw UserError(location_of(over, file_), "in " + section_ + ", 'over' must be \"seq_len\" or \"batch_size\"");
    c_.over = s->get() == "seq_len" ? "task.seq_len" : "train.batch_size";
    const toml::node& slope = need("slope", "the claimed range of the log-log slope, e.g. [0.9, 1.1] for linear");
    auto arr = slope.as_array();
    if (!arr || arr->size() != 2)
      throw UserError(location_of(slope, file_), "in " + section_ + ", 'slope' must be a range [lo, hi] (e.g. [0.9, 1.1] for linear)");
    c_.slope_lo = number_at((*arr)[0], file_, section_, "slope");
    c_.slope_hi = number_at((*arr)[1], file_, section_, "slope");
    if (!(c_.slope_lo <= c_.slope_hi))
      throw UserError(location_of(slope, file_), "in " + section_ + ", 'slope' = [lo, hi] needs lo ≤ hi");
  }

  void read_ratio_keys() {
    forbid("over", "it compares two cells");
    forbid("slope", "it compares two cells");
    forbid("margin", "a ratio claim states at_most and/or at_least");
    for (const char* key : {"at_most", "at_least"})
      if (const toml::node* n = t_.get(key)) {
        const double v = number_at(*n, file_, section_, key);
        if (!(v >= 1.0 / kLargestClaimNumber))
          throw UserError(location_of(*n, file_), "in " + section_ + ", '" + key + "' must be a positive factor (A / B), at least 1e-15");
        (std::string(key) == "at_most" ? c_.at_most : c_.at_least) = v;
      }
    if (!c_.at_most && !c_.at_least)
      throw UserError(c_.where, section_ + " (ratio) needs 'at_most' and/or 'at_least': the claimed bound on mean(A) / mean(B)");
    if (c_.at_most && c_.at_least && *c_.at_least > *c_.at_most)
      throw UserError(location_of(*t_.get("at_least"), file_), "in " + section_ + ", 'at_least' is above 'at_most'");
  }

  // A dominates claim: the metric within `margin` (not-worse half) and the cost by `factor` (ratio half).
  void read_dominates_keys() {
    forbid("over", "it compares two cells");
    forbid("slope", "it compares two cells");
    forbid("at_most", "give the cost's 'factor' instead");
    forbid("at_least", "give the cost's 'factor' instead");
    const toml::node& cost = need("cost", "the cost figure A is cheaper on: " + join(cost_figure_names(), ", "));
    const auto name = cost.as_string();
    c_.cost = name ? cost_figure_name(name->get()) : std::string();
    if (c_.cost.empty()) {
      std::vector<std::string> known = cost_figure_names();
      for (const char* stored : {"train_flops", "step_seconds_median"}) known.push_back(stored);
      throw UserError(location_of(cost, file_), "in " + section_ + ", 'cost' must name a cost figure (" +
                                                    join(cost_figure_names(), ", ") + ", or train_flops, step_seconds_median)" +
                                                    (name ? suggestion(name->get(), known) : std::string()));
    }
    if (const toml::node* n = t_.get("margin")) {
      c_.margin = number_at(*n, file_, section_, "margin");
      if (c_.margin < 0)
        throw UserError(location_of(*n, file_), "in " + section_ + ", 'margin' must not be negative (how much worse on the metric "
                                                                   "still counts as at least as good, in the metric's units)");
    }
    if (const toml::node* n = t_.get("factor")) {
      c_.factor = number_at(*n, file_, section_, "factor");
      if (!(c_.factor >= 1))
        throw UserError(location_of(*n, file_), "in " + section_ + ", 'factor' must be at least 1 (A's cost × factor ≤ B's cost; "
                                                                   "1: A costs no more than B)");
    }
  }

  // The task and the 'where' options both sides share.
  void read_task_and_where() {
    if (const toml::node* n = t_.get("task")) {
      auto s = n->as_string();
      if (!s) throw UserError(location_of(*n, file_), "in " + section_ + ", 'task' must be a task name (a string)");
      task_ = s->get();
      if (!TaskRegistry::instance().find(task_))
        throw UserError(location_of(*n, file_),
                        "in " + section_ + ", unknown task '" + task_ + "'" + suggestion(task_, TaskRegistry::instance().names()));
    }
    if (!task_.empty()) common_.emplace_back("task.name", task_);
    if (const toml::node* n = t_.get("where")) {
      where_ = n->as_table();
      if (!where_)
        throw UserError(location_of(*n, file_), "in " + section_ + ", 'where' must be a table of option = value, e.g. where = { seq_len = 256 }");
      if (where_->get("model"))
        throw UserError(location_of(*where_->get("model"), file_), "in " + section_ + ", name the model in 'a' and 'b', not in 'where'");
    }
  }

  // Side `key` ("a" or "b"): its model, the shared task and 'where', and its own options.
  CellSelector side(const char* key) const {
    CellSelector sel;
    const toml::node& n = need(key, std::string("the cell(s) ") + (key[0] == 'a' ? "A" : "B") +
                                        ": a table such as { model = \"maelre\", attention = \"auto\" }");
    const toml::table* st = n.as_table();
    if (!st) throw UserError(location_of(n, file_), "in " + section_ + ", '" + key + "' must be a table such as { model = \"maelre\" }");
    sel.where = location_of(n, file_);
    const toml::node* m = st->get("model");
    if (!m || !m->as_string())
      throw UserError(sel.where, "in " + section_ + ", '" + key + "' needs model = \"<name>\" (lrbench list models)");
    const std::string model = m->as_string()->get();
    if (!ModelRegistry::instance().find(model))
      throw UserError(location_of(*m, file_), "in " + section_ + ", unknown model '" + model + "'" +
                                                  suggestion(model, ModelRegistry::instance().names()));
    if (st->get("task"))
      throw UserError(location_of(*st->get("task"), file_), "in " + section_ + ", name the task once, at the claim's top level ('task')");
    sel.match = common_;
    sel.match_where.assign(common_.size(), t_.get("task") ? location_of(*t_.get("task"), file_) : sel.where);
    sel.match.emplace_back("model.name", model);
    sel.match_where.push_back(location_of(*m, file_));
    const SelectorReader reader(file_, section_, TaskRegistry::instance().names());
    if (where_) reader.read(*where_, model, task_, "'where'", sel);
    reader.read(*st, model, task_, "'" + std::string(key) + "'", sel);
    std::set<std::string> seen;
    for (const auto& [path, v] : sel.match)
      if (!seen.insert(path).second)
        throw UserError(sel.where, "in " + section_ + ", '" + path_name(path) + "' is given twice for '" + key + "' (in 'where' and in '" + key + "')");
    if (c_.kind == ClaimKind::Scaling && seen.count(c_.over))
      throw UserError(sel.where, "in " + section_ + ", '" + key + "' fixes '" + path_name(c_.over) + "', the axis the claim scales over");
    sel.label = selector_label(sel.match) + (sel.variant.empty() ? "" : " variant=" + sel.variant);
    return sel;
  }

  const toml::table& t_;
  const std::string& file_;
  ClaimSpec c_;
  std::string section_, kind_, task_;
  std::vector<std::pair<std::string, json>> common_;
  const toml::table* where_ = nullptr;
};

}  // namespace

std::vector<ClaimSpec> parse_claims(const toml::array& claims, const std::string& file) {
  std::vector<ClaimSpec> out;
  std::set<std::string> names;
  for (const auto& el : claims) {
    const toml::table* t = el.as_table();
    if (!t) throw UserError(location_of(el, file), "'claim' must be a table: write [[claim]]");
    out.push_back(ClaimTableReader(*t, file).read(names));
  }
  return out;
}

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
      if (const json* v = spec_value_at(r.spec, sel.match[k - 1].first)) values.insert(value_text(*v));
    }
    if (!any) {
      why = "no run has " + path_name(sel.match[k - 1].first) + " = " + value_text(sel.match[k - 1].second) +
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
  if (c.metric.rfind("infer_", 0) == 0 || c.metric.rfind("probe_", 0) == 0) return check_variant_metric(matched, sel, side);
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
  const std::string name = c.metric.substr(5);  // "eval_" + task metric
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

void ClaimChecker::check() {
  check_direction();
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
