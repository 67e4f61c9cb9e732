#include "suite/run/run_execution.h"

#include <ATen/ATen.h>
#include <fmt/core.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>
#include <torch/utils.h>

#include <cstdio>

#include "suite/core/seeds.h"
#include "suite/nn/cpu/fused_adamw.h"
#include "suite/run/checkpoint.h"
#include "suite/runtime/counting_allocator.h"
#include "suite/runtime/device_memory.h"
#include "suite/store/results_folder.h"

namespace lrb {

namespace fs = std::filesystem;

std::unique_ptr<torch::optim::Optimizer> make_optimizer(Model& model, const TrainSettings& train) {
  // Weight decay on matrices only: biases, norms and embeddings' scalars are not decayed.
  std::vector<at::Tensor> decay, no_decay;
  for (auto& p : model.parameters()) (p.dim() >= 2 ? decay : no_decay).push_back(p);
  const double lr = train.lr, wd = train.weight_decay;
  if (train.optimizer == "adamw") {
    using torch::optim::AdamWOptions;
    const double b1 = train.beta1, b2 = train.beta2;
    std::vector<torch::optim::OptimizerParamGroup> groups;
    groups.emplace_back(decay, std::make_unique<AdamWOptions>(AdamWOptions(lr).betas({b1, b2}).weight_decay(wd)));
    groups.emplace_back(no_decay, std::make_unique<AdamWOptions>(AdamWOptions(lr).betas({b1, b2}).weight_decay(0.0)));
    return std::make_unique<FusedAdamW>(std::move(groups), AdamWOptions(lr));
  }
  using torch::optim::SGDOptions;
  const double m = train.momentum;
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(decay, std::make_unique<SGDOptions>(SGDOptions(lr).momentum(m).weight_decay(wd)));
  groups.emplace_back(no_decay, std::make_unique<SGDOptions>(SGDOptions(lr).momentum(m).weight_decay(0.0)));
  return std::make_unique<torch::optim::SGD>(std::move(groups), SGDOptions(lr));
}

// Continues from the run's checkpoint when one exists and can be used. The members of a
// group each read it and agree: all resume from it, or all start from step 0.
void RunExecution::resume_from_checkpoint() {
  if (!ctx_.publish || measuring()) return;
  const fs::path ckpt = folder().checkpoint(run_.key);
  const bool present = fs::exists(ckpt);
  std::string bad;
  if (present) {
    try {
      load_checkpoint(ckpt, run_.key, *model_, *optimizer_, state_);
    } catch (const BadCheckpoint& e) {
      bad = e.what();
    }
  }
  bool usable = present && bad.empty();
  if (in_group()) {
    const int mine = !present ? 0 : bad.empty() ? 1 : 2;
    const int highest = ctx_.group->max(mine), lowest = -ctx_.group->max(-mine);
    if (usable && (lowest != 1 || highest != 1)) {
      usable = false;
      record_.provenance["checkpoint_discarded"] = {{"file", ckpt.string()},
                                                    {"reason", "not every member of the run's group could use it"}};
    }
  }
  if (!bad.empty() && writes_files()) discard_checkpoint(ckpt, bad);
  if (!usable) {
    if (present) build_from_scratch(*model_entry_);  // the load may have changed part of the model
    return;
  }
  state_.attempt += 1;
  record_.provenance["resumed_from_step"] = state_.step;
  if (state_.threads != ctx_.threads)
    record_.provenance["warning"] = fmt::format(
        "resumed with {} threads after starting with {}: the result is not bit-identical to an uninterrupted run",
        ctx_.threads, state_.threads);
}

// Model, optimizer and training state as a run starts them: every random stream from the
// run's seeds. Memory is counted from here (model, optimizer, activations, evaluation).
void RunExecution::build_from_scratch(const ModelEntry& model) {
  const std::uint64_t base = run_.seed_base();
  const auto index = [this](std::string_view stream) { return static_cast<std::uint64_t>(run_.stream_index(stream)); };
  optimizer_.reset();
  model_.reset();
  CpuMemoryCounter::begin_scope();
  state_ = TrainState{};
  torch::manual_seed(derive_seed(base, index(kStreamInit), kStreamInit));
  model_ = model.make(run_.model_options(), run_.task_info);
  model_->to(device_);
  reset_device_peak(device_);
  optimizer_ = make_optimizer(*model_, run_.train);
  Rng order(derive_seed(base, index(kStreamOrder), kStreamOrder));
  for (int i = 0; i < 4; ++i) state_.order_rng[i] = order.state()[i];
  state_.threads = ctx_.threads;
  torch::manual_seed(derive_seed(base, index(kStreamDropout), kStreamDropout));
}

// A checkpoint that cannot be used is moved aside with its reason (DIR/quarantine/) and
// the run starts again from step 0: a resumed run must be the run never stopped, or none.
void RunExecution::discard_checkpoint(const fs::path& ckpt, const std::string& reason) {
  nlohmann::json note = {{"file", ckpt.string()}, {"reason", reason}};
  try {
    note["moved_to"] = quarantine_bad_file(ctx_.results_dir, ckpt, "checkpoint: " + reason).string();
  } catch (const std::exception& e) {
    std::error_code ec;
    fs::remove(ckpt, ec);
    note["move_failed"] = e.what();
  }
  record_.provenance["checkpoint_discarded"] = note;
  fmt::print(stderr, "lrbench: the checkpoint {} cannot be used ({}); set aside, the run restarts from step 0\n",
             ckpt.string(), reason);
}

// A periodic checkpoint only shortens a resume: one that cannot be written (a full disk,
// a folder gone read-only) is said once and training goes on. Failing the run for it
// would record an environment's failure as the run's result, and the sweep would not
// run it again once there is room.
void RunExecution::save_periodic_checkpoint() {
  try {
    save_checkpoint(folder().checkpoint(run_.key), run_.key, *model_, *optimizer_, state_);
  } catch (const std::exception& e) {
    if (record_.provenance.contains("checkpoint_failed")) return;
    record_.provenance["checkpoint_failed"] = {{"step", state_.step}, {"reason", error_text(e)}};
    fmt::print(stderr, "lrbench: run {}: a periodic checkpoint could not be written at step {} ({}); training goes on without it\n",
               run_.key.substr(0, 12), state_.step, error_text(e));
  }
}

}  // namespace lrb
