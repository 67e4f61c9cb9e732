#pragma once
// Typed [train] and [measure] settings. Each option is declared once, in one table that holds
// its schema entry (name, type, default, range, help) beside the struct field it fills
// (train_settings.cpp): the schema that validates the user's file and the struct the runner
// reads cannot drift apart. A run spec's JSON stays what is hashed into the run key; these
// structs are that JSON parsed once, when the run is described (make_run_spec).
#include <cstdint>
#include <optional>
#include <string>

#include "suite/contracts/options.h"

namespace lrb {

// The most optimizer steps a run may take, written or derived from a budget.
inline constexpr std::int64_t kMaxTrainSteps = 100000000;

// [train] target: each run records the step, the FLOPs and the seconds at which an
// evaluation first reached `value` on `metric` (derived_figures.h).
struct TrainTarget {
  std::string metric;  // stored name: "eval_accuracy", "eval_loss"
  double value = 0;
  json to_json() const { return {{"metric", metric}, {"value", value}}; }
};

struct TrainSettings {
  // The run's length: `steps`, derived from a FLOP budget (`flops`: steps =
  // floor(flops / (3 x forward FLOPs per sample x batch)), expand.cpp), or, with a wall-time
  // budget (`seconds`), 0: the loop trains until its steps have taken that long.
  std::int64_t steps = 0;
  double flops = 0;    // 0: no FLOP budget
  double seconds = 0;  // 0: no time budget
  double warmup_share = 0;  // warm-up as a share of the length (steps, or the time budget); 0: warmup_steps
  std::int64_t batch_size = 0;
  std::string optimizer;  // "adamw" or "sgd"
  double lr = 0;
  double momentum = 0;
  double beta1 = 0;
  double beta2 = 0;
  std::int64_t warmup_steps = 0;
  std::string schedule;  // "cosine", "linear" or "constant"
  double weight_decay = 0;
  double grad_clip = 0;  // 0: off
  std::int64_t eval_every = 0;  // 0: only at the end
  std::int64_t eval_size = 0;
  std::int64_t memory_budget = 0;  // bytes beyond the data; 0: no budget
  std::string precision;  // "fp32", or "bf16": autocast for the forward (suite/runtime/precision.h)
  std::optional<TrainTarget> target;

  // A wall-time budget sets the length: the schedule follows the time spent, not the steps.
  bool time_budget() const { return seconds > 0; }

  // `resolved`: every option of train_schema() present (a run spec's "train"). A missing or
  // mistyped option is a broken invariant: expansion fills every default.
  static TrainSettings from_json(const json& resolved);
  json to_json() const;
};

struct MeasureSettings {
  std::int64_t budget = 0;  // bytes; 0: no batch search
  std::int64_t max_batch = 0;
  std::int64_t steps = 0;  // timed steps after one warm-up step

  static MeasureSettings from_json(const json& resolved);
  json to_json() const;
};

const OptionSchema& train_schema();
const OptionSchema& measure_schema();

// [train] options added after runs were stored (precision) are left out of a run's spec
// while at their default, so every earlier run keeps its key (run_spec.h). The first drops
// them from a resolved [train]; the second is such an option's default (null for any other
// name), for readers of a spec that find it missing.
json train_identity(json resolved);
const json* omitted_train_default(const std::string& option);

}  // namespace lrb
