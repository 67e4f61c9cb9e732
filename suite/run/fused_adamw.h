#pragma once

#include <torch/optim/adamw.h>

namespace lrb {

// AdamW whose step updates each float32 CPU parameter in one pass over its parameter,
// gradient and two moments, where LibTorch's AdamW makes nine tensor passes (and two
// temporaries) per parameter: MAELRE's 5.4M parameters made Adam a sixth of its step.
// Same options, same state (AdamWParamState: step, exp_avg, exp_avg_sq), so a checkpoint
// written by either loads into the other. The arithmetic is LibTorch's, in its order, in
// float32 (results agree to rounding, not bit for bit). Anything else — another dtype or
// device, a non-contiguous tensor, amsgrad — takes LibTorch's own step, for all parameters.
class FusedAdamW : public torch::optim::AdamW {
 public:
  using torch::optim::AdamW::AdamW;
  torch::Tensor step(LossClosure closure = nullptr) override;

 private:
  bool fusable() const;
};

}  // namespace lrb
