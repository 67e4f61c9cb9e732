#pragma once
// The optimizer half of torch_compat.h: Optimizer::zero_grad() zeroes the gradients in place
// in LibTorch 1.13 but, by default, drops them (set_to_none) in 2.x. lrbench zeroes them in
// place on both, so that from its second step on a run holds its gradients between steps and
// a step's own memory (peak_step_bytes: activations and temporaries) is the same figure on
// every LibTorch it builds against.
#include <torch/optim/optimizer.h>
#include <torch/version.h>

namespace lrb::torch_compat {

inline void zero_gradients(torch::optim::Optimizer& optimizer) {
#if TORCH_VERSION_MAJOR >= 2
  optimizer.zero_grad(/*set_to_none=*/false);
#else
  optimizer.zero_grad();
#endif
}

}  // namespace lrb::torch_compat
