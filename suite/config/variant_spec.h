#pragma once
// Evaluation variants: one trained model, several ways of running it. After training, the
// runner evaluates the same weights again under each [[variant]]'s inference settings
// (ModelEntry::inference; e.g. sret's token merging on or off, its rate and unmerge mode)
// and stores each variant's metrics in the run file as "variant.<name>.<metric>", so two
// variants of one run differ by nothing but the setting: same weights, same data.
//
//   [evaluate]                # optional: how every variant is measured
//   batch_sizes = [1, 16]     # inference peak memory and throughput at each batch size
//   repeats = 10              # timed forward passes per batch size (after `warmup`)
//   warmup = 2
//   probes = true             # activation statistics at the model's probe points
//
//   [[variant]]
//   name = "merge-dup"        # letters, digits, '_' and '-'; unique in the sweep
//   model = "sret"            # applies to every run of this model
//   merge = true              # the model's inference settings (lrbench list models)
//   unmerge = "duplicate"
//
// The variants join the run's spec (spec["evaluate"]), so they are part of its identity.
#include <string>
#include <vector>

#include "suite/contracts/options.h"

namespace toml {
inline namespace v3 {
class array;
class table;
}  // namespace v3
}  // namespace toml

namespace lrb {

struct TaskInfo;

struct VariantSpec {
  std::string name, model;
  std::vector<OptionAxis> settings;  // one value each, as written
  SourceLocation where;
};

const OptionSchema& evaluate_schema();

// [evaluate] with defaults filled in; `table` may be null (defaults only).
json parse_evaluate(const toml::table* table, const std::string& file);
// The [[variant]] tables: names, models (registered, with inference settings) and settings
// checked against the model's inference schema.
std::vector<VariantSpec> parse_variants(const toml::array& variants, const std::string& file);

// spec["evaluate"] of a run of `model` with `model_options` on `task`: the evaluate settings
// and each variant of that model with its settings resolved; null when the model has none.
// UserError at the variant when its settings are inconsistent.
json evaluate_for_run(const json& evaluate, const std::vector<VariantSpec>& variants, const std::string& model,
                      const json& model_options, const TaskInfo& task);

// The metrics a variant stores besides the task's ("infer_peak_bytes_b16", ...): whether
// `metric` is one, for the batch sizes of `evaluate`.
bool is_variant_figure(const std::string& metric, const json& evaluate);
// Stored name of a variant's metric: "variant.<name>.<metric>".
std::string variant_metric(const std::string& variant, const std::string& metric);

}  // namespace lrb
