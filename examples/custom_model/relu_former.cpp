// An out-of-tree model: a pre-norm Transformer encoder whose attention is ReLU attention
// (Shen et al., "A study on ReLU and softmax in Transformer", 2023): softmax replaced by
// ReLU(q·k / sqrt(d)), each row divided by the number of real keys. Everything lrbench
// needs is in this one file: the model, its options and FLOPs, and one registration line.
// Built against the installed lrbench by examples/custom_model/CMakeLists.txt.
#include <ATen/ATen.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "suite/contracts/model.h"
#include "suite/nn/encoder_layer.h"
#include "suite/nn/input_stem.h"
#include "suite/registry/registry.h"

namespace {

using lrb::json;

// q, k, v [B, H, N, d]; keep [B, N] bool (true = real token) or undefined.
at::Tensor relu_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& keep) {
  at::Tensor scores = at::relu(at::matmul(q, k.transpose(-2, -1)) / std::sqrt(static_cast<double>(q.size(-1))));
  double real_keys = static_cast<double>(k.size(2));
  if (keep.defined()) {
    const at::Tensor key_mask = keep.unsqueeze(1).unsqueeze(2).to(scores.scalar_type());  // [B, 1, 1, N]
    scores = scores * key_mask;
    return at::matmul(scores, v) / key_mask.sum(-1, true).clamp_min(1.0);
  }
  return at::matmul(scores, v) / real_keys;
}

class ReluFormer final : public lrb::Model {
 public:
  ReluFormer(const json& o, const lrb::TaskInfo& task) {
    stem_ = register_module("stem", lrb::InputStem(task, lrb::stem_config(o, o.at("dim"))));
    const lrb::EncoderLayerOptions lo = lrb::encoder_layer_options(o);
    for (std::int64_t i = 0; i < o.at("depth").get<std::int64_t>(); ++i)
      layers_.push_back(register_module("layer" + std::to_string(i), lrb::EncoderLayer(lo)));
    head_ = register_module("head", lrb::ClassifierHead(lo.dim, task.num_classes, false));
  }

  at::Tensor forward(const at::Tensor& x) override {
    lrb::StemOutput s = stem_->forward(x);
    at::Tensor h = s.tokens;
    const at::Tensor keep = s.keep;
    const lrb::AttendFn attend = [&](const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor&) {
      return relu_attention(q, k, v, keep);
    };
    for (auto& layer : layers_) h = layer->forward(h, attend);
    return head_->forward(h, keep);
  }

 private:
  lrb::InputStem stem_{nullptr};
  std::vector<lrb::EncoderLayer> layers_;
  lrb::ClassifierHead head_{nullptr};
};

double relu_former_flops(const json& o, const lrb::TaskInfo& t) {
  const lrb::StemConfig stem = lrb::stem_config(o, o.at("dim"));
  double n = 1;
  for (auto g : lrb::stem_grid(t, stem)) n *= static_cast<double>(g);
  const double d = o.at("dim").get<double>();
  const double attention = 2 * 2 * n * n * d;  // scores and their product with the values
  return lrb::stem_flops(t, stem) +
         o.at("depth").get<double>() * lrb::encoder_layer_flops(n, d, o.at("mlp_ratio").get<double>(), attention) +
         2 * d * static_cast<double>(t.num_classes);
}

lrb::ModelEntry relu_former_entry() {
  lrb::ModelEntry e;
  e.name = "relu-former";
  e.summary = "example out-of-tree model: pre-norm encoder with ReLU attention (examples/custom_model)";
  e.modalities = {lrb::Modality::Tokens, lrb::Modality::Signal, lrb::Modality::Grid};
  e.schema.options = lrb::encoder_option_specs(32, 1, 2, 0.0);
  for (auto& o : lrb::stem_option_specs(4)) e.schema.options.push_back(o);
  e.schema.resolve = [](json& o, const json&) { lrb::check_heads_divide_dim(o); };
  e.flops = relu_former_flops;
  e.small_options = {{"dim", 16}, {"depth", 1}, {"heads", 2}};
  e.make = [](const json& o, const lrb::TaskInfo& t) -> std::shared_ptr<lrb::Model> {
    return std::make_shared<ReluFormer>(o, t);
  };
  e.params = lrb::params_by_building(e.make);
  return e;
}

LRB_REGISTER_MODEL(relu_former_entry());

}  // namespace
