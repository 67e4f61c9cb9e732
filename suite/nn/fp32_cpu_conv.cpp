#include "suite/nn/fp32_cpu_conv.h"

#include <ATen/ATen.h>
#include <torch/version.h>

#include "suite/nn/batched_matmul.h"

namespace lrb {

Fp32CpuConvScope::Fp32CpuConvScope(at::Tensor& input) {
#if TORCH_VERSION_MAJOR < 2
  if (input.is_cpu() && cpu_autocast_active()) {
    no_autocast_.emplace(c10::DispatchKey::AutocastCPU);
    input = input.to(at::kFloat);
  }
#else
  (void)input;
#endif
}

}  // namespace lrb
