// Longformer (arXiv 2004.05150) as a classifier: an input stem (tokens, 1-D signal, or a 2-D
// grid flattened row-major to a 1-D sequence), a prepended CLS token, pre-norm layers of
// sliding-window attention + MLP, CLS (default) or mean pooling, LayerNorm, Linear.
//
// - Every token attends to w tokens on each side (window 2w+1); `window` sets w for every
//   layer (default 256, the paper's classifiers), `windows` one w per layer.
// - The CLS token has global attention: it attends to every token and every token attends
//   to it. The CLS query and the keys/values it attends over come from separate global
//   projections, initialised as copies of the local ones (the paper; Hugging Face's
//   query_global/key_global/value_global). Ordinary tokens see CLS through the local k, v.
// - The attention is suite/nn/attention/sliding_window.h: query blocks against their key
//   band, no N x N tensor anywhere (LRA's "mask over dense attention" is what we avoid).
//
// FLOPs (multiply-add = 2): projections and MLP as matrix products; attention as the kernel
// computes it: sliding_window_score_elements (the blocked band, (2w+b) keys per query, plus
// the global CLS column and row) x head dim x 2 for QK^T and again for AV. The global k/v
// projections run over every token (they feed the CLS row), the global q over CLS only.
#include "baselines/longformer.h"

#include <ATen/ATen.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>

#include "suite/core/errors.h"
#include "suite/nn/attention/sliding_window.h"
#include "suite/nn/encoder_layer.h"
#include "suite/nn/input_stem.h"
#include "suite/registry/registry.h"
#include "suite/contracts/model.h"

namespace lrb {
namespace {

struct Config {
  std::int64_t dim, depth, heads, mlp_ratio, classes, tokens, block;
  std::vector<std::int64_t> windows;  // one-sided w per layer
  double dropout;
  bool cls_pooling;
};

Config config_of(const json& o, const TaskInfo& t) {
  const auto grid = stem_grid(t, stem_config(o, o.at("dim")));
  std::int64_t tokens = 1;
  for (auto g : grid) tokens *= g;
  return {o.at("dim"), o.at("depth"), o.at("heads"), o.at("mlp_ratio"), t.num_classes, tokens, o.at("block"),
          o.at("windows").get<std::vector<std::int64_t>>(), o.at("dropout"), o.at("pooling") == "cls"};
}

SlidingWindowOptions window_options(const Config& c, std::int64_t layer) {
  SlidingWindowOptions s;
  s.window = c.windows.at(static_cast<std::size_t>(layer));
  s.block = c.block;
  return s;
}

// A shared encoder layer plus the global projections of the CLS token.
struct LayerImpl : torch::nn::Module {
  LayerImpl(const Config& c, std::int64_t layer)
      : heads(c.heads),
        window(window_options(c, layer)),
        encoder(register_module("encoder", EncoderLayer(EncoderLayerOptions{c.dim, c.heads, c.mlp_ratio, c.dropout}))),
        q_global(register_module("q_global", torch::nn::Linear(c.dim, c.dim))),
        kv_global(register_module("kv_global", torch::nn::Linear(c.dim, 2 * c.dim))) {
    // The global projections start as the local ones (Longformer's initialisation), then
    // train separately.
    at::NoGradGuard no_grad;
    const auto& qkv = encoder->qkv;
    q_global->weight.copy_(qkv->weight.narrow(0, 0, c.dim));
    q_global->bias.copy_(qkv->bias.narrow(0, 0, c.dim));
    kv_global->weight.copy_(qkv->weight.narrow(0, c.dim, 2 * c.dim));
    kv_global->bias.copy_(qkv->bias.narrow(0, c.dim, 2 * c.dim));
  }

  // x [B, n, D] with CLS at position 0; keep [B, n] bool or undefined.
  at::Tensor forward(const at::Tensor& x, const at::Tensor& keep) {
    return encoder->forward(x, [&](const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& xn) {
      const auto B = x.size(0), n = x.size(1), dh = q.size(3);
      const auto g = kv_global->forward(xn).view({B, n, 2, heads, dh}).unbind(2);  // why: suite/nn/encoder_layer.cpp
      // The kernel reads the global q only at the global rows (CLS), so the other rows may
      // hold anything: reuse the local q there rather than projecting every token twice.
      const at::Tensor q_cls = q_global->forward(xn.narrow(1, 0, 1)).view({B, 1, heads, dh}).transpose(1, 2);
      const GlobalProjections global{at::cat({q_cls, q.narrow(2, 1, n - 1)}, 2), g[0].transpose(1, 2), g[1].transpose(1, 2)};
      const at::Tensor cls_position = at::zeros({1}, at::kLong);
      return sliding_window_attention(q, k, v, window, keep, cls_position, global);
    });
  }

  std::int64_t heads;
  SlidingWindowOptions window;
  EncoderLayer encoder;
  torch::nn::Linear q_global, kv_global;
};
TORCH_MODULE(Layer);

class Longformer final : public Model {
 public:
  Longformer(const Config& c, const TaskInfo& task, const StemConfig& stem) : c_(c) {
    stem_ = register_module("stem", InputStem(task, stem));
    cls_ = register_parameter("cls", at::randn({1, 1, c.dim}) * 0.02);
    for (std::int64_t i = 0; i < c.depth; ++i) layers_.push_back(register_module("layer" + std::to_string(i), Layer(c, i)));
    head_ = register_module("head", ClassifierHead(c.dim, c.classes, c.cls_pooling));
  }

  at::Tensor forward(const at::Tensor& x) override {
    at::Tensor keep;
    const at::Tensor h = token_states(x, keep);
    return head_->forward(h, keep);
  }

  // [B, 1 + N, D]; `keep` receives the padding mask with CLS included (or stays undefined).
  at::Tensor token_states(const at::Tensor& x, at::Tensor& keep) {
    StemOutput s = stem_->forward(x);  // a 2-D grid arrives flattened row-major
    keep = s.keep;
    at::Tensor h = prepend_cls(s.tokens, cls_, keep);
    for (auto& layer : layers_) h = layer->forward(h, keep);
    return h;
  }

  nlohmann::json records() const override {
    const std::int64_t n = c_.tokens + 1;
    nlohmann::json layers = nlohmann::json::array();
    for (std::int64_t i = 0; i < c_.depth; ++i) {
      const SlidingWindowOptions w = window_options(c_, i);
      layers.push_back({{"window", w.window},
                        {"effective_window", std::min(w.window, n - 1)},
                        {"query_block", sliding_window_block(w, n)}});
    }
    return {{"tokens", n}, {"global_positions", nlohmann::json::array({0})}, {"layers", layers}};
  }

 private:
  Config c_;
  InputStem stem_{nullptr};
  at::Tensor cls_;
  std::vector<Layer> layers_;
  ClassifierHead head_{nullptr};
};

double longformer_flops(const json& o, const TaskInfo& t) {
  const Config c = config_of(o, t);
  const std::int64_t n_tokens = c.tokens + 1;  // + CLS
  const double n = static_cast<double>(n_tokens), d = static_cast<double>(c.dim);
  const double dh = d / static_cast<double>(c.heads);
  const double global_proj = 2 * 1 * d * d + 2 * n * d * 2 * d;  // q of CLS, k and v of every token
  double f = stem_flops(t, stem_config(o, c.dim));
  for (std::int64_t i = 0; i < c.depth; ++i) {
    const double scores = static_cast<double>(
        sliding_window_score_elements(1, c.heads, n_tokens, window_options(c, i), /*global_tokens=*/1));
    // QK^T and AV over the scores computed, plus the global projections.
    f += encoder_layer_flops(n, d, static_cast<double>(c.mlp_ratio), 2 * 2 * scores * dh + global_proj);
  }
  return f + 2 * d * static_cast<double>(c.classes);
}

ModelEntry longformer_entry() {
  ModelEntry e;
  e.name = "longformer";
  e.summary = "Longformer: sliding-window attention (w per layer) + global CLS with separate global projections";
  e.modalities = {Modality::Tokens, Modality::Signal, Modality::Grid};
  e.schema.options = encoder_option_specs();
  e.schema.options.insert(e.schema.options.end(), {
      {"window", OptionType::Int, json(256), "one-sided window w: each token sees w tokens on each side (paper: 256)", {}, 0, 1 << 20},
      {"windows", OptionType::IntList, json(), "one-sided window per layer (one entry per layer); default: `window` in every layer", {}, 0, 1 << 20, true},
      {"block", OptionType::Int, json(0), "kernel query block b (costs (2w+b)/(2w+1) of the band); 0: min(64, w+1)", {}, 0, 1 << 16},
      {"pooling", OptionType::String, json("cls"), "sequence summary for the head: the global CLS token, or the mean of all tokens", {"cls", "mean"}},
  });
  for (auto& o : stem_option_specs(4)) e.schema.options.push_back(o);
  e.schema.resolve = [](json& o, const json&) {
    const std::int64_t depth = o["depth"];
    check_heads_divide_dim(o);
    if (o["windows"].is_null()) {
      o["windows"] = std::vector<std::int64_t>(static_cast<std::size_t>(depth), o["window"].get<std::int64_t>());
    } else if (static_cast<std::int64_t>(o["windows"].size()) != depth) {
      throw OptionError(std::vector<std::string>{"windows", "depth"},
                        "windows lists " + std::to_string(o["windows"].size()) + " windows for " + std::to_string(depth) +
                            " layers; give one per layer, or drop windows and set window for all");
    }
  };
  e.flops = longformer_flops;
  e.small_options = {{"dim", 32}, {"depth", 1}, {"heads", 2}, {"dropout", 0.0}, {"window", 4}, {"block", 4}, {"patch", 2}};
  e.make = [](const json& o, const TaskInfo& t) -> std::shared_ptr<Model> {
    return std::make_shared<Longformer>(config_of(o, t), t, stem_config(o, o.at("dim")));
  };
  e.params = params_by_building(e.make);
  return e;
}

LRB_REGISTER_MODEL(longformer_entry());

}  // namespace

at::Tensor longformer_token_states(Model& model, const at::Tensor& x) {
  auto* m = dynamic_cast<Longformer*>(&model);
  if (!m) throw UserError("longformer_token_states needs a model built by the \"longformer\" registry entry");
  at::Tensor keep;
  return m->token_states(x, keep);
}

}  // namespace lrb
