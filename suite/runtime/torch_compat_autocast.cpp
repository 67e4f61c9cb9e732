#include "suite/runtime/torch_compat_autocast.h"

#include <ATen/ATen.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/library.h>

namespace lrb::torch_compat {

#if TORCH_VERSION_MAJOR < 2
namespace {

// LibTorch 1.13's CPU autocast has no policy for layer_norm, and its CPU kernel refuses a
// bf16 input with fp32 weights (2.x accepts the mix). Autocast's fp32 policy, as for
// layer_norm on CUDA: the input cast to fp32, the norm computed in fp32.
at::Tensor layer_norm_in_fp32(const at::Tensor& input, at::IntArrayRef normalized_shape, const c10::optional<at::Tensor>& weight,
                              const c10::optional<at::Tensor>& bias, double eps, bool cudnn_enable) {
  const c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::DispatchKey::AutocastCPU);
  const at::Tensor x = input.scalar_type() == at::kBFloat16 ? input.to(at::kFloat) : input;
  return at::layer_norm(x, normalized_shape, weight, bias, eps, cudnn_enable);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, AutocastCPU, m) { m.impl("layer_norm", TORCH_FN(layer_norm_in_fp32)); }
#endif

void register_autocast_policies() {}

}  // namespace lrb::torch_compat
