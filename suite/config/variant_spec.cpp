#include "suite/config/variant_spec.h"

#include <toml++/toml.h>

#include <algorithm>
#include <set>

#include "suite/contracts/figure_key.h"
#include "suite/core/text.h"
#include "suite/registry/registry.h"

namespace lrb {

const OptionSchema& evaluate_schema() {
  static const OptionSchema schema{{
      {"batch_sizes", OptionType::IntList, json({1, 16}), "inference peak memory and throughput of every variant at these batch sizes", {}, 1, 65536, false, false},
      {"repeats", OptionType::Int, json(10), "timed forward passes per batch size (their spread is kept)", {}, 2, 10000, false, false},
      {"warmup", OptionType::Int, json(2), "untimed forward passes before the timed ones", {}, 0, 1000, false, false},
      {"probes", OptionType::Bool, json(true), "activation statistics at the model's probe points (sret: each pooling input) against the model as trained", {}, {}, {}, false, false},
  }};
  return schema;
}

json parse_evaluate(const toml::table* table, const std::string& file) {
  json out = json::object();
  for (const auto& o : evaluate_schema().options) out[o.name] = o.default_value;
  if (!table) return out;
  for (const auto& axis : read_options(*table, evaluate_schema(), {}, file, "[evaluate]")) out[axis.name] = axis.values.at(0);
  auto sizes = out["batch_sizes"].get<std::vector<std::int64_t>>();
  const std::set<std::int64_t> distinct(sizes.begin(), sizes.end());
  if (sizes.empty() || distinct.size() != sizes.size()) {
    const toml::node* n = table->get("batch_sizes");
    throw UserError(location_of(*n, file), "in [evaluate], 'batch_sizes' must list distinct batch sizes, at least one");
  }
  return out;
}

namespace {

// Variant names become part of metric names ("variant.<name>.eval_accuracy"): no dots.
bool variant_name_ok(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

std::string string_key(const toml::table& t, const char* key, const std::string& file, const std::string& what) {
  const toml::node* n = t.get(key);
  if (!n) throw UserError(location_of(t, file), std::string("[[variant]] needs '") + key + "' (" + what + ")");
  auto s = n->as_string();
  if (!s || s->get().empty()) throw UserError(location_of(*n, file), std::string("in [[variant]], '") + key + "' must be a non-empty string (" + what + ")");
  return s->get();
}

}  // namespace

std::vector<VariantSpec> parse_variants(const toml::array& variants, const std::string& file) {
  std::vector<VariantSpec> out;
  std::set<std::string> names;
  for (const auto& el : variants) {
    const toml::table* t = el.as_table();
    if (!t) throw UserError(location_of(el, file), "'variant' must be a table: write [[variant]]");
    VariantSpec v;
    v.where = location_of(*t, file);
    v.name = string_key(*t, "name", file, "a short identifier such as \"merge-dup\"");
    if (!variant_name_ok(v.name))
      throw UserError(location_of(*t->get("name"), file),
                      "in [[variant]], 'name' may use only letters, digits, '_' and '-' (at most 64 characters): it becomes part of "
                      "metric names such as variant." + v.name + ".eval_accuracy");
    if (!names.insert(v.name).second)
      throw UserError(location_of(*t->get("name"), file), "a variant named '" + v.name + "' is already declared; names must be unique");
    v.model = string_key(*t, "model", file, "the model whose runs it evaluates again");
    const ModelEntry* m = ModelRegistry::instance().find(v.model);
    if (!m)
      throw UserError(location_of(*t->get("model"), file),
                      "in [[variant]] '" + v.name + "', unknown model '" + v.model + "'" + suggestion(v.model, ModelRegistry::instance().names()));
    if (m->inference.options.empty()) {
      std::vector<std::string> with;
      for (const auto& [name, e] : ModelRegistry::instance().entries())
        if (!e.inference.options.empty()) with.push_back(name);
      throw UserError(location_of(*t->get("model"), file), "in [[variant]] '" + v.name + "', model '" + v.model +
                                                               "' has no inference settings to vary (models that do: " + join(with, ", ") + ")");
    }
    v.settings = read_options(*t, m->inference, {"name", "model"}, file,
                              "[[variant]] '" + v.name + "' (inference settings of '" + v.model + "')");
    out.push_back(std::move(v));
  }
  return out;
}

json evaluate_for_run(const json& evaluate, const std::vector<VariantSpec>& variants, const std::string& model,
                      const json& model_options, const TaskInfo& task) {
  json list = json::array();
  for (const auto& v : variants) {
    if (v.model != model) continue;
    const ModelEntry& m = *ModelRegistry::instance().find(model);
    json s = json::object();
    for (const auto& o : m.inference.options) s[o.name] = o.default_value;
    SourceLocation at = v.where;
    for (const auto& axis : v.settings) s[axis.name] = axis.values.at(0);
    try {
      if (m.inference.resolve) m.inference.resolve(s, json{{"model", model_options}, {"task", task.to_json()}});
      for (const auto& o : m.inference.options)
        if (s[o.name].is_null()) throw OptionError(o.name, "'" + o.name + "' is required (" + o.help + ")");
    } catch (const OptionError& e) {
      for (const auto& name : e.options)
        for (const auto& axis : v.settings)
          if (axis.name == name) at = axis.where;
      throw UserError(at, "in [[variant]] '" + v.name + "': " + e.what());
    }
    list.push_back({{"name", v.name}, {"settings", s}});
  }
  if (list.empty()) return json();
  json out = evaluate;
  out["variants"] = list;
  return out;
}

bool is_variant_figure(const std::string& metric, const json& evaluate) {
  const FigureKey key = FigureKey::parse(metric);
  if (!key.variant.empty()) return false;
  if (key.kind == FigureKey::Kind::Inference) {
    const auto sizes = evaluate.at("batch_sizes").get<std::vector<std::int64_t>>();
    return std::find(sizes.begin(), sizes.end(), key.batch) != sizes.end();
  }
  // The per-channel statistics are curves, not figures.
  return key.kind == FigureKey::Kind::Probe && evaluate.value("probes", true) &&
         (key.statistic == "cosine" || key.statistic == "mean_shift" || key.statistic == "var_ratio");
}

std::string variant_metric(const std::string& variant, const std::string& metric) {
  FigureKey key = FigureKey::parse(metric);
  key.variant = variant;
  return key.stored();
}

}  // namespace lrb
