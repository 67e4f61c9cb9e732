#pragma once
// Dropout whose CPU mask comes from a counter-based generator (LibTorch's Philox), drawn in
// one pass with the scaling and kept as one byte per element. LibTorch 1.13's CPU dropout
// draws each element's Bernoulli from the Mersenne Twister one at a time and keeps a float
// mask: about 1.5 ms for [32, 197, 32], 9 % of the quickstart Transformer's step.
#include <ATen/core/Tensor.h>
#include <torch/nn/cloneable.h>

namespace lrb {

// Training: each element kept with probability 1 - p and scaled by 1 / (1 - p), the rest 0;
// otherwise, or with p = 0, x itself. On CPU float32 and bfloat16 the mask is drawn from a
// Philox stream keyed by one 64-bit draw of the default CPU generator, so a seeded run
// repeats bit for bit at any thread count; elsewhere (CUDA, other types) at::dropout.
at::Tensor dropout(const at::Tensor& x, double p, bool training);

// torch::nn::Dropout's place in a model (same registered name, no parameters), calling the above.
class DropoutImpl : public torch::nn::Cloneable<DropoutImpl> {
 public:
  explicit DropoutImpl(double p = 0.5);
  void reset() override {}
  at::Tensor forward(const at::Tensor& x);

  double p;
};
TORCH_MODULE(Dropout);

}  // namespace lrb
