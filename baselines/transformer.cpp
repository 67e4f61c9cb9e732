// The Transformer encoder baseline: an input stem (tokens, 1-D signal or 2-D grid),
// pre-norm layers (attention + MLP), CLS, mean or last-token pooling, LayerNorm, Linear head.
// attention = "softmax" is the vanilla Transformer; "linear" is the Linear Transformer
// (Katharopoulos et al. 2020, feature map elu+1); "retention" is RetNet's retention
// (arXiv 2307.08621; chunkwise, q scaled by 1/sqrt(d_head), each head's output through a
// LayerNorm without affine as RetNet's GroupNorm, no swish gate). Retention is causal: pool
// with "last", the only token that has read the whole sequence.
#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <algorithm>
#include <cmath>

#include "suite/nn/attention/linear.h"
#include "suite/nn/attention/retention.h"
#include "suite/nn/attention/softmax.h"
#include "suite/nn/encoder_layer.h"
#include "suite/nn/input_stem.h"
#include "suite/registry/registry.h"
#include "suite/contracts/model.h"

namespace lrb {
namespace {

struct Config {
  std::int64_t dim, depth, heads, mlp_ratio, classes, tokens;
  double dropout;
  bool cls_pooling, linear, retention, last_pooling;
};

Config config_of(const json& o, const TaskInfo& t) {
  const auto grid = stem_grid(t, stem_config(o, o.at("dim")));
  std::int64_t tokens = 1;
  for (auto g : grid) tokens *= g;
  return {o.at("dim"), o.at("depth"), o.at("heads"), o.at("mlp_ratio"), t.num_classes, tokens,
          o.at("dropout"), o.at("pooling") == "cls", o.at("attention") == "linear", o.at("attention") == "retention",
          o.at("pooling") == "last"};
}

class Transformer final : public Model {
 public:
  Transformer(const Config& c, const TaskInfo& task, const StemConfig& stem) : c_(c) {
    stem_ = register_module("stem", InputStem(task, stem));
    if (c.cls_pooling) cls_ = register_parameter("cls", at::randn({1, 1, c.dim}) * 0.02);
    const EncoderLayerOptions lo{c.dim, c.heads, c.mlp_ratio, c.dropout};
    for (std::int64_t i = 0; i < c.depth; ++i) layers_.push_back(register_module("layer" + std::to_string(i), EncoderLayer(lo)));
    head_ = register_module("head", ClassifierHead(c.dim, c.classes, c.cls_pooling || c.last_pooling));
  }

  at::Tensor forward(const at::Tensor& x) override {
    StemOutput s = stem_->forward(x);
    at::Tensor h = s.tokens, keep = s.keep;
    if (c_.cls_pooling) h = prepend_cls(h, cls_, keep);
    const AttendFn attend = [&](const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor&) {
      if (c_.retention)
        return at::layer_norm(retention_chunkwise(q * (1.0 / std::sqrt(static_cast<double>(q.size(3)))), k, v, keep),
                              {q.size(3)});
      return c_.linear ? linear_attention(q, k, v, LinearAttentionOptions{}, keep) : softmax_attention(q, k, v, keep);
    };
    for (auto& layer : layers_) h = layer->forward(h, attend);
    return c_.last_pooling ? head_->forward(last_real_token(h, keep), at::Tensor()) : head_->forward(h, keep);
  }

 private:
  Config c_;
  InputStem stem_{nullptr};
  at::Tensor cls_;
  std::vector<EncoderLayer> layers_;
  ClassifierHead head_{nullptr};
};

double transformer_flops(const json& o, const TaskInfo& t) {
  const Config c = config_of(o, t);
  const double n = static_cast<double>(c.tokens + (c.cls_pooling ? 1 : 0)), d = static_cast<double>(c.dim);
  const double dh = d / static_cast<double>(c.heads);
  // Retention, chunkwise (64): scores and values inside each chunk, plus the d_head x d_head
  // state read and update per token.
  const double attn = c.linear      ? 2 * 2 * n * d * dh + 2 * 2 * n * d
                      : c.retention ? 2 * 2 * n * std::min(64.0, n) * d + 2 * 2 * n * d * dh
                                    : 2 * 2 * n * n * d;
  return stem_flops(t, stem_config(o, c.dim)) +
         static_cast<double>(c.depth) * encoder_layer_flops(n, d, static_cast<double>(c.mlp_ratio), attn) +
         2 * d * static_cast<double>(c.classes);
}

ModelEntry transformer_entry() {
  ModelEntry e;
  e.name = "transformer";
  e.summary = "pre-norm Transformer encoder; attention softmax (vanilla), linear (Linear Transformer) or retention (RetNet)";
  e.modalities = {Modality::Tokens, Modality::Signal, Modality::Grid};
  e.schema.options = encoder_option_specs();
  e.schema.options.insert(e.schema.options.end(), {
      {"pooling", OptionType::String, json("mean"), "sequence summary for the head (last: the last real token)", {"mean", "cls", "last"}},
      {"attention", OptionType::String, json("softmax"), "softmax (full), linear (elu+1 feature map) or retention (RetNet, causal)",
       {"softmax", "linear", "retention"}},
  });
  for (auto& o : stem_option_specs(4)) e.schema.options.push_back(o);
  e.schema.resolve = [](json& o, const json&) { check_heads_divide_dim(o); };
  e.flops = transformer_flops;
  e.small_options = {{"dim", 32}, {"depth", 1}, {"heads", 2}, {"dropout", 0.0}};
  e.make = [](const json& o, const TaskInfo& t) -> std::shared_ptr<Model> {
    return std::make_shared<Transformer>(config_of(o, t), t, stem_config(o, o.at("dim")));
  };
  e.params = params_by_building(e.make);
  return e;
}

LRB_REGISTER_MODEL(transformer_entry());

}  // namespace
}  // namespace lrb
