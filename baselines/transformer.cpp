// The Transformer encoder baseline: an input stem (tokens, 1-D signal or 2-D grid),
// pre-norm layers (attention + MLP), CLS or mean pooling, LayerNorm, Linear head. attention = "softmax" is
// the vanilla Transformer; "linear" is the Linear Transformer (Katharopoulos et al. 2020,
// feature map elu+1).
#include <ATen/ATen.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>

#include <cmath>

#include "suite/nn/attention/linear.h"
#include "suite/nn/attention/softmax.h"
#include "suite/nn/input_stem.h"
#include "suite/registry/registry.h"
#include "suite/run/model.h"

namespace lrb {
namespace {

struct Config {
  std::int64_t dim, depth, heads, mlp_ratio, classes, tokens;
  double dropout;
  bool cls_pooling, linear;
};

Config config_of(const json& o, const TaskInfo& t) {
  const auto grid = stem_grid(t, stem_config(o, o.at("dim")));
  std::int64_t tokens = 1;
  for (auto g : grid) tokens *= g;
  return {o.at("dim"), o.at("depth"), o.at("heads"), o.at("mlp_ratio"), t.num_classes, tokens,
          o.at("dropout"), o.at("pooling") == "cls", o.at("attention") == "linear"};
}

struct LayerImpl : torch::nn::Module {
  LayerImpl(const Config& c)
      : c(c),
        norm1(register_module("norm1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.dim})))),
        norm2(register_module("norm2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.dim})))),
        qkv(register_module("qkv", torch::nn::Linear(c.dim, 3 * c.dim))),
        proj(register_module("proj", torch::nn::Linear(c.dim, c.dim))),
        fc1(register_module("fc1", torch::nn::Linear(c.dim, c.mlp_ratio * c.dim))),
        fc2(register_module("fc2", torch::nn::Linear(c.mlp_ratio * c.dim, c.dim))),
        drop(register_module("drop", torch::nn::Dropout(c.dropout))) {}

  at::Tensor forward(const at::Tensor& x, const at::Tensor& keep) {
    const auto B = x.size(0), N = x.size(1);
    auto h = qkv->forward(norm1->forward(x)).view({B, N, 3, c.heads, c.dim / c.heads}).permute({2, 0, 3, 1, 4});
    auto a = c.linear ? linear_attention(h[0], h[1], h[2], LinearAttentionOptions{}, keep)
                      : softmax_attention(h[0], h[1], h[2], keep);
    auto y = x + drop->forward(proj->forward(a.transpose(1, 2).reshape({B, N, c.dim})));
    return y + drop->forward(fc2->forward(at::gelu(fc1->forward(norm2->forward(y)))));
  }

  Config c;
  torch::nn::LayerNorm norm1, norm2;
  torch::nn::Linear qkv, proj, fc1, fc2;
  torch::nn::Dropout drop;
};
TORCH_MODULE(Layer);

class Transformer final : public Model {
 public:
  Transformer(const Config& c, const TaskInfo& task, const StemConfig& stem) : c_(c) {
    stem_ = register_module("stem", InputStem(task, stem));
    if (c.cls_pooling) cls_ = register_parameter("cls", at::randn({1, 1, c.dim}) * 0.02);
    for (std::int64_t i = 0; i < c.depth; ++i) layers_.push_back(register_module("layer" + std::to_string(i), Layer(c)));
    head_ = register_module("head", ClassifierHead(c.dim, c.classes, c.cls_pooling));
  }

  at::Tensor forward(const at::Tensor& x) override {
    StemOutput s = stem_->forward(x);
    at::Tensor h = s.tokens, keep = s.keep;
    if (c_.cls_pooling) {
      h = at::cat({cls_.expand({h.size(0), 1, c_.dim}), h}, 1);
      if (keep.defined()) keep = at::cat({at::ones({x.size(0), 1}, keep.options()), keep}, 1);
    }
    for (auto& layer : layers_) h = layer->forward(h, keep);
    return head_->forward(h, keep);
  }

 private:
  Config c_;
  InputStem stem_{nullptr};
  at::Tensor cls_;
  std::vector<Layer> layers_;
  ClassifierHead head_{nullptr};
};

double transformer_flops(const json& o, const TaskInfo& t) {
  const Config c = config_of(o, t);
  const double n = static_cast<double>(c.tokens + (c.cls_pooling ? 1 : 0)), d = static_cast<double>(c.dim);
  const double dh = d / static_cast<double>(c.heads);
  const double proj = 2 * n * d * 3 * d + 2 * n * d * d;
  const double mlp = 2 * 2 * n * d * static_cast<double>(c.mlp_ratio) * d;
  const double attn = c.linear ? 2 * 2 * n * d * dh + 2 * 2 * n * d : 2 * 2 * n * n * d;
  return stem_flops(t, stem_config(o, c.dim)) + static_cast<double>(c.depth) * (proj + mlp + attn) +
         2 * d * static_cast<double>(c.classes);
}

ModelEntry transformer_entry() {
  ModelEntry e;
  e.name = "transformer";
  e.summary = "pre-norm Transformer encoder; attention softmax (vanilla) or linear (Linear Transformer)";
  e.modalities = {Modality::Tokens, Modality::Signal, Modality::Grid};
  e.schema.options = {
      {"dim", OptionType::Int, json(64), "model width", {}, 8, 8192},
      {"depth", OptionType::Int, json(2), "layers", {}, 1, 128},
      {"heads", OptionType::Int, json(4), "attention heads (must divide dim)", {}, 1, 256},
      {"mlp_ratio", OptionType::Int, json(4), "MLP hidden width / dim", {}, 1, 16},
      {"dropout", OptionType::Float, json(0.1), "dropout on residual branches", {}, 0.0, 0.9},
      {"pooling", OptionType::String, json("mean"), "sequence summary for the head", {"mean", "cls"}},
      {"attention", OptionType::String, json("softmax"), "softmax (full) or linear (elu+1 feature map)", {"softmax", "linear"}},
  };
  for (auto& o : stem_option_specs(4)) e.schema.options.push_back(o);
  e.schema.resolve = [](json& o, const json&) {
    if (o["dim"].get<std::int64_t>() % o["heads"].get<std::int64_t>() != 0)
      throw OptionError(std::vector<std::string>{"heads", "dim"}, "heads (" + o["heads"].dump() + ") must divide dim (" + o["dim"].dump() + ")");
  };
  e.flops = transformer_flops;
  e.small_options = {{"dim", 32}, {"depth", 1}, {"heads", 2}, {"dropout", 0.0}};
  e.make = [](const json& o, const TaskInfo& t) -> std::shared_ptr<Model> {
    return std::make_shared<Transformer>(config_of(o, t), t, stem_config(o, o.at("dim")));
  };
  return e;
}

LRB_REGISTER_MODEL(transformer_entry());

}  // namespace
}  // namespace lrb
