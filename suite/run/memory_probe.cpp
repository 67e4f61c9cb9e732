#include "suite/run/run_execution.h"

#include <ATen/ATen.h>

#include <algorithm>

#include "suite/core/stop_flag.h"
#include "suite/runtime/counting_allocator.h"
#include "suite/runtime/device_memory.h"

namespace lrb {

namespace fs = std::filesystem;

// [measure]: peak memory and step time at [train] batch_size (one warm-up step, then
// `steps` timed ones), then the largest batch whose step fits the budget: doubling until
// a step is refused, then bisection. The budget covers everything the run allocates
// beyond its data (parameters, gradients, optimizer state, activations).
void RunExecution::measure() {
  const MeasureSettings& m = *run_.measure;
  const std::int64_t batch = run_.train.batch_size;
  const double lr = run_.train.lr;
  model_->train();
  auto& c = state_.curves;
  train_step(cyclic_batch(batch), lr);  // warm-up: optimizer state, allocator caches
  state_.peak_bytes = state_.peak_step_bytes = 0;
  reset_device_peak(device_);
  model_->reset_figures();
  for (std::int64_t i = 0; i < m.steps; ++i) {
    if (stop_requested()) throw StopRequested{};
    const StepResult r = train_step(cyclic_batch(batch), lr);
    c["step_seconds"].push_back(r.seconds);
    c["step_peak_bytes"].push_back(static_cast<double>(r.peak_bytes));
    state_.peak_step_bytes = std::max(state_.peak_step_bytes, r.peak_bytes);
    record_phases(r.phases);
    ++state_.step;
  }
  const TrainState at_batch = state_;  // the probes below must not change these figures
  for (const auto& [name, value] : model_->figures()) record_.metrics[name] = value;
  if (const std::int64_t device_peak = device_peak_bytes(device_); device_peak >= 0)
    record_.metrics["device_peak_bytes"] = static_cast<double>(device_peak);
  const std::int64_t budget = m.budget;
  if (budget > 0) {
    const std::int64_t max_batch = m.max_batch;
    auto fits = [&](std::int64_t b) {
      if (stop_requested()) throw StopRequested{};
      CpuMemoryCounter::set_limit(budget);
      set_device_memory_limit(device_, budget);
      bool ok = true;
      try {
        train_step(cyclic_batch(b), lr);
      } catch (const std::exception& e) {
        // The budget (CPU) or the accelerator's own limit; anything else is a real failure.
        if (!CpuMemoryCounter::budget_hit() && !is_device_out_of_memory(e)) throw;
        ok = false;
        release_device_cache(device_);
      }
      CpuMemoryCounter::set_limit(0);
      CpuMemoryCounter::clear_budget_hit();
      CpuMemoryCounter::release_free_memory();
      set_device_memory_limit(device_, 0);
      release_device_cache(device_);
      c["probe_batch"].push_back(static_cast<double>(b));
      c["probe_fits"].push_back(ok ? 1.0 : 0.0);
      return ok;
    };
    std::int64_t lo = 0, hi = max_batch + 1;
    for (std::int64_t b = 1; b <= max_batch; b *= 2) {
      if (!fits(b)) {
        hi = b;
        break;
      }
      lo = b;
    }
    while (hi - lo > 1) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      (fits(mid) ? lo : hi) = mid;
    }
    record_.metrics["max_batch_in_budget"] = static_cast<double>(lo);
    record_.metrics["memory_budget_bytes"] = static_cast<double>(budget);
  }
  const auto curves = std::move(state_.curves);
  state_ = at_batch;
  state_.curves = curves;
}

std::vector<std::int64_t> RunExecution::cyclic_batch(std::int64_t batch) const {
  std::vector<std::int64_t> idx(static_cast<std::size_t>(batch));
  for (std::int64_t i = 0; i < batch; ++i) idx[static_cast<std::size_t>(i)] = i % data_->train.size();
  return idx;
}

}  // namespace lrb
