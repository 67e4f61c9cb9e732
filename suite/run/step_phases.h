#pragma once
// Where a training step's time goes: data (selecting the batch and moving it to the device),
// forward (with the loss), backward, optimizer (zeroing, clipping and the update), the
// gradient exchange of a data-parallel step, and the rest ("other": the harness's memory
// accounting and synchronisation). Read with one clock per phase boundary, cheap enough to
// stay on (docs/benchmarks.md, "Where a step goes"); on a GPU each boundary waits for the
// device, as the step clock already does at the step's ends.
#include <ATen/Device.h>

#include <chrono>

#include "suite/run/derived_figures.h"  // kStepPhaseCurves: the curves these phases are recorded as
#include "suite/runtime/cuda_device.h"

namespace lrb {

struct StepPhases {
  double data = 0, forward = 0, backward = 0, optimizer = 0, exchange = 0;
  double other = 0;  // the step's time less the timed phases
  double timed() const { return data + forward + backward + optimizer + exchange; }
};

class PhaseClock {
 public:
  explicit PhaseClock(const at::Device& device) : device_(device), last_(std::chrono::steady_clock::now()) {}
  // Seconds since the previous lap (or the start), once the device has finished them.
  double lap() {
    if (device_.is_cuda()) synchronize_device(device_);
    const auto now = std::chrono::steady_clock::now();
    const double s = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    return s;
  }

 private:
  at::Device device_;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace lrb
