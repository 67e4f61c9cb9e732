#pragma once

#include <torch/optim/adamw.h>

namespace lrb {

// AdamW whose step updates each float32 CPU parameter in one pass over its parameter,
// gradient and two moments, where LibTorch's AdamW makes nine tensor passes (and two
// temporaries) per parameter: MAELRE's 5.4M parameters made Adam a sixth of its step.
// Same options, same state (AdamWParamState: step, exp_avg, exp_avg_sq), so a checkpoint
// written by either loads into the other. The arithmetic is LibTorch's, in its order, in
// float32 (results agree to rounding, not bit for bit). Parameters of another float type or
// device (a GPU's), or not contiguous, take LibTorch's AdamW arithmetic op for op, but as
// multi-tensor ops (at::_foreach_*: on CUDA one launch covers many tensors, where LibTorch's
// AdamW launches nine kernels a parameter); amsgrad or a sparse or mixed set takes LibTorch's
// own step, for all parameters.
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
  // Which update this step's parameters take: the fused loop (every one CPU float32 and
  // contiguous), the multi-tensor ops (dense, of a float type, on one device), else LibTorch's.
  enum class UpdatePath { fused_loop, multi_tensor, libtorch };
  UpdatePath update_path() const;
  torch::optim::AdamWParamState& state_of(const at::Tensor& p);
  void update_all(float grad_scale);
  void update_multi_tensor();
};

// The harness's optimizer step: the global norm of the gradients of `parameters` (the
// optimizer's, in the model's order) clipped to max_norm (0: not clipped), then the
// optimizer's step; in one pass where the optimizer is a FusedAdamW.
void clip_and_step(torch::optim::Optimizer& optimizer, const std::vector<at::Tensor>& parameters, double max_norm);

}  // namespace lrb
