#include "suite/nn/fp32_cpu_conv.h"

#include <ATen/ATen.h>

#include "suite/nn/batched_matmul.h"

namespace lrb {

Fp32CpuConvScope::Fp32CpuConvScope(at::Tensor& input) {
  if (input.is_cpu() && cpu_autocast_active()) {
    no_autocast_.emplace(c10::DispatchKey::AutocastCPU);
    input = input.to(at::kFloat);
  }
}

}  // namespace lrb
