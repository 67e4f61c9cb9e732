#pragma once
// LibTorch's bf16 convolutions on the CPU (oneDNN) now and then return non-finite weight
// gradients: on LibTorch 1.13 and an AVX512-BF16 Zen 4, mViT's depthwise pooling convolution
// (in most processes, about a fifth of the steps) and MAELRE's strided Conv1d reduction (a few
// in a hundred); on LibTorch 2.6 (oneDNN 3.7) and an AVX512-BF16 Zen 5, MAELRE's last Conv1d
// reduction, at a step that moves with the heap's layout (a read of memory it never wrote).
// Never in fp32. Under CPU autocast a convolution inside this scope runs in fp32, as
// LibTorch's autocast runs layer_norm; elsewhere (no autocast, a GPU) the scope does nothing.
#include <ATen/core/Tensor.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include <optional>

namespace lrb {

class Fp32CpuConvScope {
 public:
  // Converts `input` to float32 in place where the scope applies.
  explicit Fp32CpuConvScope(at::Tensor& input);
  bool active() const { return no_autocast_.has_value(); }

 private:
  std::optional<c10::impl::ExcludeDispatchKeyGuard> no_autocast_;
};

}  // namespace lrb
