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
  // clip_grad_norm_(parameters, max_norm), then step(): the same norm (summed in the order
  // of `parameters`, this optimizer's) and coefficient, applied as the update reads each
  // gradient rather than in a pass of its own (LibTorch multiplies every gradient by it, by 1
  // too). The gradients keep their unclipped values. Returns the total norm.
  double clip_and_step(const std::vector<at::Tensor>& parameters, double max_norm);

 private:
  bool fusable() const;
  void update_all(float grad_scale);
};

// The harness's optimizer step: the global norm of the gradients of `parameters` (the
// optimizer's, in the model's order) clipped to max_norm (0: not clipped), then the
// optimizer's step; in one pass where the optimizer is a FusedAdamW.
void clip_and_step(torch::optim::Optimizer& optimizer, const std::vector<at::Tensor>& parameters, double max_norm);

}  // namespace lrb
