#include "suite/nn/encoder_layer.h"

#include <ATen/ATen.h>

namespace lrb {

EncoderLayerImpl::EncoderLayerImpl(const EncoderLayerOptions& o) : options(o) {
  norm1 = register_module("norm1", LayerNorm(torch::nn::LayerNormOptions({o.dim})));
  norm2 = register_module("norm2", LayerNorm(torch::nn::LayerNormOptions({o.dim})));
  qkv = register_module("qkv", torch::nn::Linear(o.dim, 3 * o.dim));
  proj = register_module("proj", torch::nn::Linear(o.dim, o.dim));
  fc1 = register_module("fc1", torch::nn::Linear(o.dim, o.mlp_ratio * o.dim));
  fc2 = register_module("fc2", torch::nn::Linear(o.mlp_ratio * o.dim, o.dim));
  drop = register_module("drop", Dropout(o.dropout));
}

at::Tensor EncoderLayerImpl::forward(const at::Tensor& x, const AttendFn& attend) {
  const auto B = x.size(0), N = x.size(1), D = options.dim;
  const at::Tensor xn = norm1->forward(x);
  // q, k, v by unbind along the projection's own axis: its backward stacks the three
  // gradients straight into the projection's layout (three selects of a permuted view sent
  // back three zero-filled gradients of the whole projection, added, then copied back).
  const auto h = qkv->forward(xn).view({B, N, 3, options.heads, D / options.heads}).unbind(2);
  const at::Tensor a = attend(h[0].transpose(1, 2), h[1].transpose(1, 2), h[2].transpose(1, 2), xn);
  const at::Tensor y = x + drop->forward(proj->forward(a.transpose(1, 2).reshape({B, N, D})));
  return y + drop->forward(fc2->forward(at::gelu(fc1->forward(norm2->forward(y)))));
}

double encoder_layer_flops(double n, double d, double mlp_ratio, double attention_flops) {
  const double projections = 2 * n * d * 3 * d + 2 * n * d * d;
  const double mlp = 2 * 2 * n * d * mlp_ratio * d;
  return projections + mlp + attention_flops;
}

std::vector<OptionSpec> encoder_option_specs(std::int64_t dim, std::int64_t depth, std::int64_t heads, double dropout) {
  return {
      {"dim", OptionType::Int, json(dim), "model width", {}, 8, 8192},
      {"depth", OptionType::Int, json(depth), "layers", {}, 1, 128},
      {"heads", OptionType::Int, json(heads), "attention heads (must divide dim)", {}, 1, 256},
      {"mlp_ratio", OptionType::Int, json(4), "MLP hidden width / dim", {}, 1, 16},
      {"dropout", OptionType::Float, json(dropout), "dropout on residual branches", {}, 0.0, 0.9},
  };
}

void check_heads_divide_dim(const json& o) {
  if (o.at("dim").get<std::int64_t>() % o.at("heads").get<std::int64_t>() != 0)
    throw OptionError(std::vector<std::string>{"heads", "dim"},
                      "heads (" + o.at("heads").dump() + ") must divide dim (" + o.at("dim").dump() + ")");
}

EncoderLayerOptions encoder_layer_options(const json& o) {
  return {o.at("dim"), o.at("heads"), o.at("mlp_ratio"), o.at("dropout")};
}

}  // namespace lrb
