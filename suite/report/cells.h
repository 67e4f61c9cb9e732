#pragma once
// From run records to table cells: one cell per (task, model, setting) over its seeds.
//
// A setting has two parts. The *model options* that vary between the runs of one model (over
// every task, so "maelre attention=linear" names the same entrant on every task) make the
// entrant a row shows. The *condition* is what varies between the runs of a task outside the
// model (task.seq_len, task options, train options, and the base seed when runs come from
// sweeps with different base seeds): cells of one condition are what comparisons pair by
// seed and rankings order. Paths are chosen by varying_paths (suite/config/expand.h): the
// fewest that tell runs apart. JSON and tables name a path by its last part ("seq_len",
// "attention"), or in full where two paths share a last part.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "suite/store/run_record.h"

namespace lrb {

struct SeedValue {
  std::int64_t seed = 0;
  double value = 0;
  std::uint32_t run = 0;  // the run's key is its cell's run_keys[run]
};

// A run of the cell that gave no value: failed, stopped, or ok without a finite metric.
struct RunProblem {
  std::int64_t seed = 0;
  std::string run;
  std::string status;  // "failed", "stopped", "no value"
  std::string reason;
};

// A run of a cell whose spec has a target (train.target): whether and when it reached it.
struct TargetOutcome {
  std::int64_t seed = 0;
  std::uint32_t run = 0;  // the run's key is its cell's run_keys[run]
  std::string status;     // "reached", "not reached", "failed", "stopped"
  std::optional<double> step, flops, seconds;  // reached only; flops and seconds where recorded
};

struct Cell {
  std::string task;
  std::string model;                                       // registry name
  std::string metric;                                      // stored name: "eval_accuracy"
  nlohmann::json model_options = nlohmann::json::object(); // varying model options
  nlohmann::json condition = nlohmann::json::object();     // varying task/train paths (+ base_seed)
  nlohmann::json condition_without_seq_len = nlohmann::json::object();  // what a scaling fit holds fixed
  std::string entrant;                                     // "maelre attention=linear"
  std::string condition_label;                             // "seq_len=256 lr=0.001", "" when nothing varies
  std::int64_t seq_len = 0;                                // task.seq_len of its runs
  // The keys of the runs its values came from, each once: a run gives up to a value, a
  // chance level and every efficiency figure (a million SeedValues at 100,000 runs).
  std::vector<std::string> run_keys;
  std::vector<SeedValue> values;                           // ok runs with a finite value, by seed
  std::vector<RunProblem> problems;                        // runs without a value, by seed
  int failed = 0, stopped = 0, no_value = 0;
  std::vector<std::string> duplicates;                     // "seed 1: runs a and b; a used"
  // Efficiency figures of its ok runs (efficiency.h names them), finite values only, by seed.
  std::map<std::string, std::vector<SeedValue>> efficiency;
  // Efficiency figures an ok run recorded as NaN: not counted (a TorchScript model's FLOPs
  // when no product ran), shown as such rather than as missing.
  std::set<std::string> not_counted;
  // The chance level of accuracy ("eval_chance": the commonest class's share of the eval
  // split), by seed, from every run that recorded it.
  std::vector<SeedValue> chance;
  std::set<int> threads;
  std::set<std::string> revisions, devices;
  // Runs with a target: the target ({metric, value}; null without one) and each run's outcome, by seed.
  // The FLOP budget its runs trained to (spec train.flops), where they had one: what a front
  // on training FLOPs places the cell at (each run spent it less up to one step, by floor).
  std::optional<double> flops_budget;
  nlohmann::json target;
  std::vector<TargetOutcome> target_runs;
  // Model options chosen by a size match (spec model.match): option -> {figure, to, count,
  // value}, from the cell's first run. Such an option names the entrant by its match
  // ("maelre params≈1e+06"), which is the same on every task, not by the width it gave.
  nlohmann::json matched = nlohmann::json::object();
  // Runs trained to a wall-time budget (train.seconds): their devices and thread counts,
  // whose mixing makes their lengths incomparable.
  std::set<std::string> budget_devices;
  std::set<int> budget_threads;
  // A run whose seeds all started from one set of saved weights (provenance model.same_init:
  // a TorchScript module trained with same_init = true): its spread is not the initialisation's.
  bool same_init = false;
  // Why the matrix-product peak its runs' util rests on may understate the device
  // (provenance matmul_peak.suspect: measured while another process used the cores).
  std::set<std::string> suspect_peaks;

  nlohmann::json setting() const;     // condition and model options together (the JSON "setting")
  std::string setting_label() const;  // "seq_len=256 attention=linear"
  std::string setting_shown() const;  // setting_label(), or "-" where nothing varies (a table's cell)
};

// Cells of every task, ordered by task, condition, entrant. `metric`: "" = each task's
// primary metric (eval_<first task metric>); a task metric name ("accuracy") or a stored
// name ("peak_bytes") otherwise.
std::vector<Cell> group_cells(const std::vector<RunRecord>& runs, const std::string& metric);

// Whether larger values of a stored figure are better: its direction in the figure
// catalogue (suite/contracts/figures.h) is not "lower". A figure without a direction (none,
// or undeclared) is shown high first, and the table says it has no better side.
bool higher_is_better(const std::string& metric);
// The stored metric name shown for `task`.
std::string metric_of(const std::vector<RunRecord>& runs, const std::string& task, const std::string& requested);
// "eval_accuracy" -> "accuracy"; other names as they are.
std::string display_metric(const std::string& metric);
// "k=v k=v" of a flat JSON object (strings unquoted).
std::string label_of(const nlohmann::json& settings);

}  // namespace lrb
