// BigBird (arXiv 2007.14062), ITC variant, as a classifier: an input stem (tokens, 1-D
// signal, or a 2-D grid flattened row-major to a 1-D sequence), pre-norm layers of
// block-sparse attention + MLP, CLS (default; the CLS token is prepended, so it sits in the
// global first block) or mean pooling, LayerNorm, Linear.
//
// - Blocks of b tokens (default 64); each query block attends to its window blocks j-1, j,
//   j+1, the global first and last blocks and r random blocks (default 3); the first and
//   last query blocks attend to everything (suite/nn/attention/block_sparse.h).
// - The random block table [H, nb-2, r] of layer l is drawn once, when the model is built,
//   from derive_seed(random_seed, l, "bigbird.random_blocks"), and replayed in every forward:
//   the pattern is part of the run's identity (the `random_seed` option), and records()
//   stores every layer's table and whether the layer fell back to dense attention
//   (N <= (5+2r)b, where the pattern is no sparser than dense, as in Hugging Face).
//
// FLOPs (multiply-add = 2): projections and MLP as matrix products; attention as the kernel
// computes it: block_sparse_score_elements (middle query blocks x (5+r) key blocks, the two
// global query blocks x every key; N^2 on the dense fallback) x head dim x 2 for QK^T and
// again for AV.
#include <ATen/ATen.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>

#include "suite/core/seeds.h"
#include "suite/nn/attention/block_sparse.h"
#include "suite/nn/encoder_layer.h"
#include "suite/nn/input_stem.h"
#include "suite/registry/registry.h"
#include "suite/contracts/model.h"

namespace lrb {
namespace {

struct Config {
  std::int64_t dim, depth, heads, mlp_ratio, classes, tokens, block, random_blocks;
  std::uint64_t random_seed;
  double dropout;
  bool cls_pooling;

  std::int64_t sequence() const { return tokens + (cls_pooling ? 1 : 0); }
  BlockSparseOptions attention(std::int64_t layer) const {
    BlockSparseOptions o;
    o.block = block;
    o.random_blocks = random_blocks;
    o.seed = derive_seed(random_seed, static_cast<std::uint64_t>(layer), "bigbird.random_blocks");
    return o;
  }
};

Config config_of(const json& o, const TaskInfo& t) {
  const auto grid = stem_grid(t, stem_config(o, o.at("dim")));
  std::int64_t tokens = 1;
  for (auto g : grid) tokens *= g;
  return {o.at("dim"), o.at("depth"), o.at("heads"), o.at("mlp_ratio"), t.num_classes, tokens, o.at("block"),
          o.at("random_blocks"), o.at("random_seed").get<std::uint64_t>(), o.at("dropout"), o.at("pooling") == "cls"};
}

// A shared encoder layer plus this layer's block-sparse pattern.
struct LayerImpl : torch::nn::Module {
  LayerImpl(const Config& c, std::int64_t layer)
      : options(c.attention(layer)),
        dense(block_sparse_uses_dense(c.sequence(), options)),
        encoder(register_module("encoder", EncoderLayer(EncoderLayerOptions{c.dim, c.heads, c.mlp_ratio, c.dropout}))) {
    // Drawn once (the sequence length is fixed by the task), replayed every forward.
    if (!dense)
      table = block_sparse_random_table(c.heads, ceil_blocks(c.sequence(), c.block), c.random_blocks, options.seed);
  }

  static std::int64_t ceil_blocks(std::int64_t n, std::int64_t b) { return (n + b - 1) / b; }

  at::Tensor forward(const at::Tensor& x, const at::Tensor& keep) {
    return encoder->forward(x, [&](const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor&) {
      return block_sparse_attention(q, k, v, options, keep, table).out;
    });
  }

  BlockSparseOptions options;
  bool dense;
  at::Tensor table;  // [H, nb-2, r] int64 on the CPU; undefined on the dense fallback
  EncoderLayer encoder;
};
TORCH_MODULE(Layer);

nlohmann::json table_json(const at::Tensor& table) {
  if (!table.defined()) return nlohmann::json::array();
  const at::Tensor t = table.contiguous();
  const auto acc = t.accessor<std::int64_t, 3>();
  nlohmann::json heads = nlohmann::json::array();
  for (std::int64_t h = 0; h < t.size(0); ++h) {
    nlohmann::json rows = nlohmann::json::array();
    for (std::int64_t j = 0; j < t.size(1); ++j) {
      std::vector<std::int64_t> row(static_cast<std::size_t>(t.size(2)));
      for (std::int64_t i = 0; i < t.size(2); ++i) row[static_cast<std::size_t>(i)] = acc[h][j][i];
      rows.push_back(row);
    }
    heads.push_back(rows);
  }
  return heads;
}

class BigBird final : public Model {
 public:
  BigBird(const Config& c, const TaskInfo& task, const StemConfig& stem) : c_(c) {
    stem_ = register_module("stem", InputStem(task, stem));
    if (c.cls_pooling) cls_ = register_parameter("cls", at::randn({1, 1, c.dim}) * 0.02);
    for (std::int64_t i = 0; i < c.depth; ++i) layers_.push_back(register_module("layer" + std::to_string(i), Layer(c, i)));
    head_ = register_module("head", ClassifierHead(c.dim, c.classes, c.cls_pooling));
  }

  at::Tensor forward(const at::Tensor& x) override {
    StemOutput s = stem_->forward(x);  // a 2-D grid arrives flattened row-major
    at::Tensor h = s.tokens, keep = s.keep;
    if (c_.cls_pooling) h = prepend_cls(h, cls_, keep);
    for (auto& layer : layers_) h = layer->forward(h, keep);
    return head_->forward(h, keep);
  }

  // Per layer: the seed, the random block table [H][nb-2][r] and whether it fell back to dense.
  nlohmann::json records() const override {
    nlohmann::json layers = nlohmann::json::array();
    for (const auto& layer : layers_)
      layers.push_back({{"seed", layer->options.seed},
                        {"dense_fallback", layer->dense},
                        {"random_blocks", table_json(layer->table)}});
    return {{"tokens", c_.sequence()}, {"block", c_.block}, {"random_blocks", c_.random_blocks}, {"layers", layers}};
  }

 private:
  Config c_;
  InputStem stem_{nullptr};
  at::Tensor cls_;
  std::vector<Layer> layers_;
  ClassifierHead head_{nullptr};
};

double bigbird_flops(const json& o, const TaskInfo& t) {
  const Config c = config_of(o, t);
  const double n = static_cast<double>(c.sequence()), d = static_cast<double>(c.dim);
  const double dh = d / static_cast<double>(c.heads);
  // The score count does not depend on the layer's seed.
  const double scores = static_cast<double>(block_sparse_score_elements(1, c.heads, c.sequence(), c.attention(0)));
  return stem_flops(t, stem_config(o, c.dim)) +
         static_cast<double>(c.depth) * encoder_layer_flops(n, d, static_cast<double>(c.mlp_ratio), 2 * 2 * scores * dh) +
         2 * d * static_cast<double>(c.classes);
}

ModelEntry bigbird_entry() {
  ModelEntry e;
  e.name = "bigbird";
  e.summary = "BigBird (ITC): block-sparse attention with window, global and seeded random blocks";
  e.modalities = {Modality::Tokens, Modality::Signal, Modality::Grid};
  e.schema.options = encoder_option_specs();
  e.schema.options.insert(e.schema.options.end(), {
      {"block", OptionType::Int, json(64), "block size b (paper: 64)", {}, 1, 4096},
      {"random_blocks", OptionType::Int, json(3), "random key blocks r per query block (paper: 3)", {}, 0, 64},
      {"random_seed", OptionType::Int, json(0), "seeds every layer's random block table (part of the run identity)", {}, 0, 9007199254740991.0},
      {"pooling", OptionType::String, json("cls"), "sequence summary for the head: a prepended CLS token (global block), or the mean", {"cls", "mean"}},
  });
  for (auto& o : stem_option_specs(4)) e.schema.options.push_back(o);
  e.schema.resolve = [](json& o, const json&) { check_heads_divide_dim(o); };
  e.flops = bigbird_flops;
  // b = 4, r = 1: sparse from 29 tokens on, so every zoo input (65 tokens) takes the sparse path.
  e.small_options = {{"dim", 32}, {"depth", 1}, {"heads", 2}, {"dropout", 0.0}, {"block", 4}, {"random_blocks", 1}, {"patch", 2}};
  e.make = [](const json& o, const TaskInfo& t) -> std::shared_ptr<Model> {
    return std::make_shared<BigBird>(config_of(o, t), t, stem_config(o, o.at("dim")));
  };
  e.params = params_by_building(e.make);
  return e;
}

LRB_REGISTER_MODEL(bigbird_entry());

}  // namespace
}  // namespace lrb
