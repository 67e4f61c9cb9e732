// parse_claims: the [[claim]] tables of a sweep file read into ClaimSpecs (claim_spec.h).
#include "suite/config/claim_spec.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "suite/config/claim_spec_detail.h"
#include "suite/config/expand.h"
#include "suite/config/sweep_spec.h"
#include "suite/contracts/figures.h"
#include "suite/core/files.h"
#include "suite/core/seeds.h"
#include "suite/core/text.h"
#include "suite/registry/registry.h"

namespace lrb {

namespace {

using claim_detail::claim_kind_from;
using claim_detail::path_name;

SourceLocation key_at(const toml::key& k, const std::string& file) {
  return SourceLocation{file, static_cast<int>(k.source().begin.line), static_cast<int>(k.source().begin.column)};
}

const std::vector<std::string> kClaimKeys = {"name", "statement", "source", "kind",    "metric",   "task", "where", "a",
                                             "b",    "margin",    "over",   "slope",   "at_most",  "at_least", "cost", "factor",
                                             "of",   "against"};
const std::vector<std::string> kClaimKinds = {"better", "not-worse", "scaling", "ratio", "dominates", "variance"};

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
    if (path == "model.name") model = setting_text(v);
    else if (path == "task.name") task = setting_text(v);
    else {
      const auto dot = path.rfind('.');
      rest += " " + path.substr(dot + 1) + "=" + setting_text(v);
    }
  }
  return model + (task.empty() ? "" : " on " + task) + rest;
}

}  // namespace

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
    if (c_.kind != ClaimKind::Variance) {
      forbid("of", "it is a key of a variance claim");
      forbid("against", "it is a key of a variance claim");
    }
    if (c_.kind == ClaimKind::Better || c_.kind == ClaimKind::NotWorse)
      read_paired_keys();
    else if (c_.kind == ClaimKind::Scaling)
      read_scaling_keys();
    else if (c_.kind == ClaimKind::Ratio)
      read_ratio_keys();
    else if (c_.kind == ClaimKind::Variance)
      read_variance_keys();
    else
      read_dominates_keys();
    read_task_and_where();
    c_.a = side("a");
    // A variance claim without B reads A's values; with B, A − B on the same streams.
    if (c_.kind != ClaimKind::Scaling && (c_.kind != ClaimKind::Variance || t_.get("b"))) c_.b = side("b");
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
    kind_ = required_string(t_, "kind", file_, section_, "better, not-worse, scaling, ratio, dominates or variance");
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
    read_bounds("mean(A) / mean(B)");
  }

  // at_most and/or at_least: a positive factor bounding the claim's ratio (`what`).
  void read_bounds(const std::string& what) {
    for (const char* key : {"at_most", "at_least"})
      if (const toml::node* n = t_.get(key)) {
        const double v = number_at(*n, file_, section_, key);
        if (!(v >= 1.0 / kLargestClaimNumber))
          throw UserError(location_of(*n, file_), "in " + section_ + ", '" + key + "' must be a positive factor (" + what + "), at least 1e-15");
        (std::string(key) == "at_most" ? c_.at_most : c_.at_least) = v;
      }
    if (!c_.at_most && !c_.at_least)
      throw UserError(c_.where, section_ + " (" + kind_ + ") needs 'at_most' and/or 'at_least': the claimed bound on " + what);
    if (c_.at_most && c_.at_least && *c_.at_least > *c_.at_most)
      throw UserError(location_of(*t_.get("at_least"), file_), "in " + section_ + ", 'at_least' is above 'at_most'");
  }

  // A variance claim: the streams a study varies (`of`) against those of another (`against`,
  // by default all), and the bounds on the ratio of the variances they would see.
  void read_variance_keys() {
    forbid("over", "it reads one cell's crossed streams");
    forbid("slope", "it reads one cell's crossed streams");
    forbid("margin", "a variance claim states at_most and/or at_least");
    const toml::node& of = need("of", "the streams a study varies, e.g. of = [\"order\"] (lrbench list streams)");
    c_.of = stream_names(of, "of", false);
    c_.of_where = location_of(of, file_);
    if (const toml::node* against = t_.get("against")) {
      c_.against = stream_names(*against, "against", true);
      c_.against_where = location_of(*against, file_);
      std::vector<std::string> x = c_.of, y = c_.against;
      std::sort(x.begin(), x.end());
      std::sort(y.begin(), y.end());
      if (x == y)
        throw UserError(c_.against_where, "in " + section_ + ", 'of' and 'against' name the same streams: their ratio is 1 by definition");
    }
    read_bounds("V(of) / V(against), the variance a study varying only 'of' sees over one varying 'against'");
  }

  // A stream name or a list of them (kStreams); "all" only where `all_allowed` (as no list).
  std::vector<std::string> stream_names(const toml::node& n, const char* key, bool all_allowed) const {
    std::vector<const toml::node*> items;
    if (const toml::array* arr = n.as_array())
      for (const auto& e : *arr) items.push_back(&e);
    else
      items.push_back(&n);
    std::vector<std::string> names, known;
    for (const auto& s : kStreams) known.emplace_back(s.name);
    const std::string shape = std::string("'") + key + "' must be a stream name or a list of them (" + join(known, ", ") +
                              (all_allowed ? "), or \"all\"" : ")");
    if (items.empty()) throw UserError(location_of(n, file_), "in " + section_ + ", " + shape);
    for (const toml::node* e : items) {
      const auto s = e->as_string();
      if (!s) throw UserError(location_of(*e, file_), "in " + section_ + ", " + shape);
      if (all_allowed && s->get() == "all" && !n.is_array()) return {};
      if (std::find(known.begin(), known.end(), s->get()) == known.end())
        throw UserError(location_of(*e, file_), "in " + section_ + ", '" + key + "' names no stream '" + s->get() + "'" +
                                                    suggestion(s->get(), known) + " (lrbench list streams)");
      if (std::find(names.begin(), names.end(), s->get()) != names.end())
        throw UserError(location_of(*e, file_), "in " + section_ + ", '" + key + "' names '" + s->get() + "' twice");
      names.push_back(s->get());
    }
    return names;
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

}  // namespace lrb
