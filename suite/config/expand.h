#pragma once
// Expansion: a validated SweepSpec -> the ordered list of RunSpecs (axes -> states, in the
// nvbench sense). The order is deterministic: tasks in file order, each task's axes, then
// models in file order, each model's axes, then [train] axes, then seeds (innermost).
// Combinations that cannot run (a model that does not take the task's input kind, options
// that contradict each other for one axis value) are skipped with a recorded reason.
#include <string>
#include <vector>

#include "suite/config/run_spec.h"
#include "suite/config/sweep_spec.h"

namespace lrb {

struct SkippedCombination {
  std::string what;    // "listops seq_len=64 / transformer dim=96 heads=5"
  std::string reason;  // why it cannot run
};

struct ExpandedSweep {
  std::vector<RunSpec> runs;
  std::vector<SkippedCombination> skipped;
  std::vector<ClaimSpec> claims;  // the sweep's claims, checked, with what each side expects
  // What a budget or a size match made of each setting, for `lrbench validate`: "fashion-mnist
  // / maelre: dim = 40 (params 998912, nearest 1e+06)", "... flops 2e+13 -> 1234 steps ...".
  std::vector<std::string> derivations;
};

// Throws UserError when the sweep could expand to more than [sweep] max_runs runs (checked
// before any run is built) or to none.
ExpandedSweep expand_sweep(const SweepSpec& spec);
// Task settings x model settings x [train] settings x seeds (skipped combinations included),
// saturating at int64's maximum.
std::int64_t count_runs_upper_bound(const SweepSpec& spec);

// The options that differ between runs of one (task, model) pair: the "setting" a table
// row shows. Returns flattened "task.seq_len", "model.attention", "train.lr", ... paths.
std::vector<std::string> varying_paths(const std::vector<json>& specs);
std::vector<std::string> varying_paths(const std::vector<const json*>& specs);
// A run spec's value at a setting path ("model.window", "train.lr", "task.seq_len"); null
// where the run has none. A [train] option left out of the spec at its default has that value.
json value_at_path(const json& spec, const std::string& path);
// The same at a path of the spec as stored ("model.options.window", "evaluate.variants",
// "ranks_per_run"), for the claims' selectors; nullptr where the spec has none.
const json* spec_value_at(const json& spec, const std::string& spec_path);
// A setting's value as a label shows it: text as it is, a number as a reader writes it
// ("2e+13", not "20000000000000.0"), anything else as JSON.
std::string setting_text(const json& value);
// A matched width as a setting shows it: "params≈1e+06" (an entry of spec.model.match).
std::string matched_size_label(const json& match);
// "listops/256 transformer attention=linear seed 0"
std::string describe_run(const RunSpec& run, const std::vector<std::string>& varying);

}  // namespace lrb
