#include "suite/run/run_execution.h"

#include <ATen/ATen.h>
#include <fmt/core.h>

#include <algorithm>
#include <stdexcept>

#include "suite/core/seeds.h"
#include "suite/core/stop_flag.h"
#include "suite/mpi/run_group.h"
#include "suite/nn/cpu/fused_adamw.h"
#include "suite/run/gradient_exchange.h"
#include "suite/runtime/cuda_device.h"
#include "suite/runtime/device_memory.h"
#include "suite/runtime/precision.h"
#include "suite/runtime/torch_compat_optim.h"

namespace lrb {

namespace fs = std::filesystem;

void RunExecution::train_and_evaluate() {
  const TrainSettings& train = run_.train;
  const std::int64_t steps = train.steps;
  const std::int64_t batch = train.batch_size;
  // A time budget ends the loop once the steps have taken that long (their time only, not
  // the evaluations'); a resumed run counts its earlier steps' time from its curves.
  double elapsed = 0;
  for (double s : state_.curves["step_seconds"]) elapsed += s;
  const auto done = [&] {
    return train.time_budget() ? elapsed >= train.seconds || state_.step >= kMaxTrainSteps : state_.step >= steps;
  };
  const std::int64_t eval_every = train.eval_every;
  model_->train();
  auto& c = state_.curves;
  for (const char* name : {"train_step", "train_loss", "lr", "step_seconds", "step_peak_bytes"}) c[name];
  for (const char* name : kStepPhaseCurves) c[name];
  // A step's own memory (peak_step_bytes) is that of the steps that find the gradients and
  // the optimizer's state resident. The first step of an attempt (a start or a resume)
  // allocates the gradients, and at step 0 the optimizer's state, which stay: they are in
  // peak_bytes, and in peak_step_bytes only where a run has no other step.
  bool first_of_attempt = true;
  std::int64_t first_step_peak = 0;
  while (true) {
    const bool eval_due = done() || (eval_every > 0 && state_.step > 0 && state_.step % eval_every == 0);
    if (eval_due && state_.last_eval_step != state_.step) {
      if (!in_group()) {
        evaluate();
      } else if (writes_files()) {
        // The replicas are identical: member 0 evaluates for the group, the others wait.
        try {
          evaluate(/*stoppable=*/false);
        } catch (const std::exception& e) {
          pending_error_ = "evaluation: " + error_text(e);
        }
      } else {
        state_.last_eval_step = state_.step;
      }
    }
    if (in_group()) agree_at_boundary();
    if (done()) break;
    if (stop_requested() && !in_group()) throw StopRequested{};

    const double lr = learning_rate_at(train, state_.step, elapsed);
    const StepResult r = train_step(next_batch(batch), lr);
    if (!std::isfinite(r.loss)) throw std::runtime_error(fmt::format("non-finite training loss ({})", r.loss));
    const double loss_value = r.loss, secs = r.seconds;
    elapsed += secs;
    const std::int64_t step_peak = r.peak_bytes;
    if (first_of_attempt) first_step_peak = step_peak;
    else state_.peak_step_bytes = std::max(state_.peak_step_bytes, step_peak);
    first_of_attempt = false;

    ++state_.step;
    c["train_step"].push_back(static_cast<double>(state_.step));
    c["train_loss"].push_back(loss_value);
    c["lr"].push_back(lr);
    c["step_seconds"].push_back(secs);
    c["step_peak_bytes"].push_back(static_cast<double>(step_peak));
    record_phases(r.phases);
    if (ctx_.checkpoint_every > 0 && ctx_.publish && writes_files() && state_.step % ctx_.checkpoint_every == 0 && !done())
      save_periodic_checkpoint();
  }
  if (in_group())
    if (const std::string differ = replicas_differ(*ctx_.group, model_->parameters()); !differ.empty())
      throw std::runtime_error(differ);
  state_.peak_bytes = std::max(state_.peak_bytes, run_peak_bytes(device_));
  if (state_.peak_step_bytes == 0) state_.peak_step_bytes = first_step_peak;
}

std::vector<std::int64_t> RunExecution::next_batch(std::int64_t batch) {
  const std::int64_t n = data_->train.size();
  std::vector<std::int64_t> idx;
  idx.reserve(static_cast<std::size_t>(batch));
  Rng rng(0);
  rng.set_state(state_.order_rng);
  while (static_cast<std::int64_t>(idx.size()) < batch) {
    if (state_.order.empty() || state_.position >= n) {
      state_.order.resize(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i) state_.order[static_cast<std::size_t>(i)] = i;
      for (std::int64_t i = n - 1; i > 0; --i)
        std::swap(state_.order[static_cast<std::size_t>(i)],
                  state_.order[rng.below(static_cast<std::uint64_t>(i) + 1)]);
      state_.position = 0;
      ++state_.epoch;
    }
    idx.push_back(state_.order[static_cast<std::size_t>(state_.position++)]);
  }
  for (int i = 0; i < 4; ++i) state_.order_rng[i] = rng.state()[i];
  return idx;
}

// One optimizer step on the samples `idx` (repeated cyclically by the caller when a
// measurement asks for more than the data holds). Tracks the run's memory peaks.
// On a GPU the clock is read only once the device has finished what came before (and,
// at the end, the step itself): kernels launch asynchronously.
RunExecution::StepResult RunExecution::train_step(const std::vector<std::int64_t>& idx, double lr) {
  const WatchedCall watched = watch(fmt::format("training step {}", state_.step + 1));
  synchronize_device(device_);
  const auto t0 = std::chrono::steady_clock::now();
  const std::int64_t live_before = run_live_bytes(device_);
  const std::int64_t peak_before = run_peak_bytes(device_);
  run_reset_peak(device_);
  for (auto& g : optimizer_->param_groups()) g.options().set_lr(lr);
  StepResult r;
  PhaseClock clock(device_);
  if (in_group()) {
    step_in_group(idx, r, clock);
  } else {
    torch_compat::zero_gradients(*optimizer_);
    r.phases.optimizer = clock.lap();
    const at::Tensor index = at::tensor(at::ArrayRef<std::int64_t>(idx), at::kLong);
    const at::Tensor x = data_->train.x.index_select(0, index).to(device_);
    const at::Tensor y = data_->train.y.index_select(0, index).to(device_);
    r.phases.data = clock.lap();
    const at::Tensor loss = loss_of(forward_in_precision(x), y, run_.task_info.multilabel);
    r.loss = loss.item<double>();
    r.phases.forward = clock.lap();
    if (std::isfinite(r.loss)) {
      loss.backward();
      r.phases.backward = clock.lap();
      clip_and_step(*optimizer_, model_->parameters(), run_.train.grad_clip);
      r.phases.optimizer += clock.lap();
    }
  }
  synchronize_device(device_);
  r.peak_bytes = run_peak_bytes(device_) - live_before;
  run_reset_peak(device_);
  state_.peak_bytes = std::max({state_.peak_bytes, peak_before, r.peak_bytes + live_before});
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.phases.other = r.seconds - r.phases.timed();
  return r;
}

// The model's forward under the run's precision ([train] precision); backward then runs
// outside the autocast scope, in the types the forward recorded.
at::Tensor RunExecution::forward_in_precision(const at::Tensor& x) {
  const AutocastScope autocast(run_.train.precision, device_);
  return model_->forward(x);
}

// One value per step in each phase's curve (step_data_seconds, ...), beside step_seconds.
void RunExecution::record_phases(const StepPhases& p) {
  const double values[] = {p.data, p.forward, p.backward, p.optimizer, p.other};
  for (std::size_t i = 0; i < std::size(kStepPhaseCurves); ++i) state_.curves[kStepPhaseCurves[i]].push_back(values[i]);
}

}  // namespace lrb
