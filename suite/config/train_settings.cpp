#include "suite/config/train_settings.h"

#include <functional>
#include <vector>

#include "suite/core/errors.h"

namespace lrb {

namespace {

// One option: its schema entry and how it reads into and out of the struct.
template <class Settings>
struct Field {
  OptionSpec spec;
  std::function<void(Settings&, const json&)> read;
  std::function<json(const Settings&)> write;
  bool omitted_at_default = false;  // left out of a run's spec at its default (train_identity)
};

// Options added after runs were stored: train_identity() leaves them out at their default.
constexpr bool kOmittedAtDefault = true;

template <class Settings, class T>
Field<Settings> field(OptionSpec spec, T Settings::*member, bool omitted_at_default = false) {
  return {std::move(spec), [member](Settings& s, const json& v) { s.*member = v.get<T>(); },
          [member](const Settings& s) { return json(s.*member); }, omitted_at_default};
}

template <class Settings>
OptionSchema schema_of(const std::vector<Field<Settings>>& fields) {
  OptionSchema schema;
  for (const auto& f : fields) schema.options.push_back(f.spec);
  return schema;
}

template <class Settings>
Settings read_fields(const std::vector<Field<Settings>>& fields, const json& resolved, const char* section) {
  Settings s;
  for (const auto& f : fields) {
    const auto it = resolved.find(f.spec.name);
    LRB_CHECK(it != resolved.end() || f.omitted_at_default, std::string("a resolved ") + section + " lacks an option");
    try {
      f.read(s, it != resolved.end() ? *it : f.spec.default_value);
    } catch (const json::exception&) {
      LRB_CHECK(false, std::string("a resolved ") + section + " option has the wrong type");
    }
  }
  return s;
}

template <class Settings>
json write_fields(const std::vector<Field<Settings>>& fields, const Settings& s) {
  json out = json::object();
  for (const auto& f : fields) out[f.spec.name] = f.write(s);
  return out;
}

using TS = TrainSettings;
const std::vector<Field<TS>>& train_fields() {
  static const std::vector<Field<TS>> fields{
      field<TS>({"steps", OptionType::Int, json(300), "optimizer steps (or set the length by flops or seconds)", {}, 0,
                 static_cast<double>(kMaxTrainSteps)},
                &TS::steps),
      field<TS>({"flops", OptionType::Amount, json(0.0),
                 "a FLOP budget instead of steps: floor(flops / (3 x the model's forward FLOPs per sample x batch_size)) steps, "
                 "counted by the model's own FLOP count",
                 {}, 0.0, 1e30},
                &TS::flops, kOmittedAtDefault),
      field<TS>({"seconds", OptionType::Float, json(0.0),
                 "a wall-time budget instead of steps: train until the training steps have taken this long (machine-bound: "
                 "needs [sweep] device)",
                 {}, 0.0, 1e8},
                &TS::seconds, kOmittedAtDefault),
      field<TS>({"batch_size", OptionType::Int, json(32), "samples per step", {}, 1, {}}, &TS::batch_size),
      field<TS>({"optimizer", OptionType::String, json("adamw"), "adamw or sgd (with momentum)", {"adamw", "sgd"}}, &TS::optimizer),
      field<TS>({"lr", OptionType::Float, json(1e-3), "peak learning rate", {}, 0.0, {}}, &TS::lr),
      field<TS>({"momentum", OptionType::Float, json(0.9), "SGD momentum", {}, 0.0, 1.0}, &TS::momentum),
      field<TS>({"beta1", OptionType::Float, json(0.9), "AdamW first-moment decay", {}, 0.0, 1.0}, &TS::beta1),
      field<TS>({"beta2", OptionType::Float, json(0.999), "AdamW second-moment decay", {}, 0.0, 1.0}, &TS::beta2),
      field<TS>({"warmup_steps", OptionType::Int, json(0), "linear warm-up from 0 to lr", {}, 0, {}}, &TS::warmup_steps),
      field<TS>({"warmup_share", OptionType::Float, json(0.0),
                 "warm-up as a share of the run's length instead of warmup_steps (of its steps, derived ones included, or of "
                 "its time budget)",
                 {}, 0.0, 0.9},
                &TS::warmup_share, kOmittedAtDefault),
      field<TS>({"schedule", OptionType::String, json("cosine"), "learning-rate decay after warm-up", {"cosine", "linear", "constant"}},
               &TS::schedule),
      field<TS>({"weight_decay", OptionType::Float, json(0.01), "decoupled (AdamW) or L2 (SGD) weight decay", {}, 0.0, {}},
               &TS::weight_decay),
      field<TS>({"grad_clip", OptionType::Float, json(1.0), "clip the global gradient norm to this (0: off)", {}, 0.0, {}}, &TS::grad_clip),
      field<TS>({"eval_every", OptionType::Int, json(0), "steps between evaluations (0: only at the end)", {}, 0, {}}, &TS::eval_every),
      field<TS>({"eval_size", OptionType::Int, json(512), "evaluation samples", {}, 1, {}}, &TS::eval_size),
      field<TS>({"memory_budget", OptionType::Bytes, json(0), "fail the run if it allocates more than this beyond its data (0: no budget)",
                {}, 0, {}},
               &TS::memory_budget),
      field<TS>({"precision", OptionType::String, json("fp32"),
                "fp32, or bf16: forward passes under bf16 autocast, weights, gradients and optimizer state in fp32 "
                "(needs a CPU with AVX512-BF16 or AMX, or a GPU of compute capability 8.0 or later)",
                {"fp32", "bf16"}},
               &TS::precision, kOmittedAtDefault),
  };
  return fields;
}

using MS = MeasureSettings;
const std::vector<Field<MS>>& measure_fields() {
  // Not axes: a measurement sweep measures one setting of these.
  static const std::vector<Field<MS>> fields{
      field<MS>({"budget", OptionType::Bytes, json(0),
                "find the largest batch whose training step fits in this much memory beyond the data (0: no search)", {}, 0, {}, false, false},
               &MS::budget),
      field<MS>({"max_batch", OptionType::Int, json(65536), "upper end of the batch search", {}, 1, {}, false, false}, &MS::max_batch),
      field<MS>({"steps", OptionType::Int, json(3), "timed training steps at [train] batch_size, after one warm-up step", {}, 1, 1000, false, false},
               &MS::steps),
  };
  return fields;
}

}  // namespace

const OptionSchema& train_schema() {
  static const OptionSchema schema = schema_of(train_fields());
  return schema;
}

const OptionSchema& measure_schema() {
  static const OptionSchema schema = schema_of(measure_fields());
  return schema;
}

json train_identity(json resolved) {
  for (const auto& f : train_fields())
    if (f.omitted_at_default) {
      const auto it = resolved.find(f.spec.name);
      if (it != resolved.end() && *it == f.spec.default_value) resolved.erase(it);
    }
  return resolved;
}

const json* omitted_train_default(const std::string& option) {
  for (const auto& f : train_fields())
    if (f.omitted_at_default && f.spec.name == option) return &f.spec.default_value;
  return nullptr;
}

TrainSettings TrainSettings::from_json(const json& resolved) {
  TrainSettings s = read_fields(train_fields(), resolved, "[train]");
  if (const auto t = resolved.find("target"); t != resolved.end()) {
    try {
      s.target = TrainTarget{t->at("metric").get<std::string>(), t->at("value").get<double>()};
    } catch (const json::exception&) {
      LRB_CHECK(false, "a resolved [train] target is not {metric, value}");
    }
  }
  return s;
}
json TrainSettings::to_json() const {
  json out = write_fields(train_fields(), *this);
  if (target) out["target"] = target->to_json();
  return out;
}
MeasureSettings MeasureSettings::from_json(const json& resolved) { return read_fields(measure_fields(), resolved, "[measure]"); }
json MeasureSettings::to_json() const { return write_fields(measure_fields(), *this); }

}  // namespace lrb
