#pragma once
// The pre-norm encoder layer the sequence models share: y = x + proj(attend(LN(x))), then
// y + MLP(LN(y)). Models differ only in how they attend, so the attention is a function of
// the projected q, k, v ([B, H, N, d]) and the normalised input (for models with extra
// projections, such as Longformer's global ones).
#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/options/normalization.h>

#include <functional>
#include <vector>

#include "suite/contracts/options.h"
#include "suite/nn/cpu/dropout.h"
#include "suite/nn/cpu/layer_norm.h"

namespace lrb {

struct EncoderLayerOptions {
  std::int64_t dim = 64, heads = 4, mlp_ratio = 4;
  double dropout = 0.0;
};

using AttendFn = std::function<at::Tensor(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                          const at::Tensor& x_norm)>;

class EncoderLayerImpl : public torch::nn::Module {
 public:
  explicit EncoderLayerImpl(const EncoderLayerOptions& options);
  // x [B, N, D] -> [B, N, D]; `attend` returns [B, H, N, D/H].
  at::Tensor forward(const at::Tensor& x, const AttendFn& attend);

  EncoderLayerOptions options;
  LayerNorm norm1{nullptr}, norm2{nullptr};
  torch::nn::Linear qkv{nullptr}, proj{nullptr}, fc1{nullptr}, fc2{nullptr};
  Dropout drop{nullptr};
};
TORCH_MODULE(EncoderLayer);

// Forward FLOPs of one layer over n tokens (multiply-add = 2): the q/k/v and output
// projections and the MLP, plus `attention_flops` as the model's kernel computes it.
double encoder_layer_flops(double tokens, double dim, double mlp_ratio, double attention_flops);

// dim, depth, heads, mlp_ratio, dropout — the options every encoder shares — and the rule
// that heads divide dim (an OptionError naming both).
std::vector<OptionSpec> encoder_option_specs(std::int64_t dim = 64, std::int64_t depth = 2, std::int64_t heads = 4,
                                             double dropout = 0.1);
void check_heads_divide_dim(const json& options);
EncoderLayerOptions encoder_layer_options(const json& options);

}  // namespace lrb
