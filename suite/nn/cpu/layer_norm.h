#pragma once
// LayerNorm over the last dimension, whose CPU float32 forward normalises a row in vector
// registers. LibTorch 1.13's CPU kernel takes about 1.6 ns an element whatever the width:
// 0.32 ms for the quickstart's [32, 196, 32] activations, 3.4 ms a step in mViT v2's 21 norms,
// where this forward takes 0.10 ms and 1.1 ms (docs/benchmarks.md, "LayerNorm's forward in vector registers").
// The backward is LibTorch's (already fast: 0.10 ms at that shape), from the same saved mean
// and reciprocal standard deviation.
#include <ATen/core/Tensor.h>
#include <torch/nn/cloneable.h>
#include <torch/nn/options/normalization.h>

namespace lrb {

// at::layer_norm(x, {x.size(-1)}, weight, bias, eps): weight and bias [d] or undefined (1
// and 0). On the CPU in float32 with d a multiple of 8 and both weight and bias given, rows
// normalised by lrbench's loop (the mean, then the variance of the centred row, both summed
// in eight lanes); elsewhere (CUDA, other types, bf16 under autocast, no affine parameters)
// at::layer_norm. The two round differently (about 1e-7
// relative), so a model's runs are repeatable but not the same bits as with at::layer_norm.
at::Tensor layer_norm(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, double eps);

// Tests: true sends every call to at::layer_norm.
bool& layer_norm_use_libtorch();

// torch::nn::LayerNorm's place in a model, over the last dimension only: the same options,
// parameters ("weight", "bias") and initialisation, so checkpoints are unchanged.
class LayerNormImpl : public torch::nn::Cloneable<LayerNormImpl> {
 public:
  explicit LayerNormImpl(torch::nn::LayerNormOptions options);
  void reset() override;
  at::Tensor forward(const at::Tensor& x);

  torch::nn::LayerNormOptions options;
  at::Tensor weight, bias;
};
TORCH_MODULE(LayerNorm);

}  // namespace lrb
