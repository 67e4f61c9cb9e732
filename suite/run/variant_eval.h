#pragma once
// Evaluation variants, run (the declarations: suite/config/variant_spec.h). After training,
// one set of weights is evaluated again under each variant's inference settings:
//   - the task's metrics and eval_loss on the whole evaluation split, batch by batch;
//   - with probes on, at each of the model's probe points (sret: every pooling input), the
//     per-channel mean and variance of the activations and their cosine similarity, token
//     by token, to the activations of the model as trained on the same batch;
//   - at each batch size of [evaluate], forward passes timed `repeats` times (after
//     `warmup`) with the peak memory each allocates above what was live before it (the
//     activations). Variants take turns within every repeat, so a machine whose load
//     changes slows them alike.
// Stored in the record as "variant.<name>.<metric>" metrics and curves (results/SCHEMA.md,
// "Evaluation variants"); the model is left as trained.
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <functional>

#include <nlohmann/json.hpp>

#include "suite/contracts/task_info.h"
#include "suite/contracts/model.h"
#include "suite/contracts/task.h"
#include "suite/store/run_record.h"

namespace lrb {

struct VariantEvalInput {
  const nlohmann::json& evaluate;  // spec["evaluate"]: batch_sizes, repeats, warmup, probes, variants
  const Split& eval;
  const TaskInfo& task;
  std::int64_t batch_size;         // evaluation batches ([train] batch_size, as the runner's evaluation)
  at::Device device;
  std::function<void()> check_stop;  // throws when a stop was requested (between batches)
};

void evaluate_variants(Model& model, const VariantEvalInput& in, RunRecord& record);

}  // namespace lrb
