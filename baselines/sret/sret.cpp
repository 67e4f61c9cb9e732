// SReT, the sliced recursive transformer (Shen et al., ECCV 2022, arXiv 2111.05297;
// reference code szq0214/SReT, SReT.py), on 2-D grids and 1-D signals, with MergeOver's
// token merging after training (arXiv 2608.13141) as inference settings.
//
// Follows SReT's code:
// - Stem: `stem_convs` stride-2 3x3 convolutions, each with BatchNorm and ReLU, widths
//   [W/2, W, W, ...] (SReT: three, 224 -> 28), then learned absolute positions. Ours:
//   stem_convs = 0 is one stride-1 conv, so a 28x28 image gives SReT-T's stage lengths
//   (784, 196, 49) and its merge counts.
// - Stages: `depths[s]` block applications made of `blocks[s]` weight-shared blocks, each
//   applied `depths[s] / blocks[s]` times in a row (SReT's recursion); every application is
//   followed by its own small MLP ("Non_proj": x*c1 + c2*MLP(LN(x)), hidden np_mlp_ratio*W).
//   A block is pre-norm attention and MLP with a learned scalar on each of the four terms of
//   its two residual sums (LearnableCoefficient), LayerNorm eps 1e-6, qkv with bias.
// - Sliced group attention: a block's first application cuts the tokens into groups1[s]
//   contiguous groups; its later applications permute the tokens at random and cut them
//   into groups2[s] groups (sliced_attention.h).
// - Between stages: a depthwise conv (kernel 3, stride 2, padding 1, groups = channels) that
//   halves each grid axis and widens W_s to W_{s+1} (a multiple of W_s).
// - Head: mean over tokens, LayerNorm, Linear.
// - Presets T, LT, S are SReT's (base_dims x heads = widths); tiny is ours, sized for
//   Fashion-MNIST on two cores (one stem conv: 14x14 tokens; widths 32/64/128, heads
//   1/2/4, two applications of one block per stage, groups1 [4,1,1], groups2 [2,1,1]).
// Our choices where the code is silent or tied to ImageNet:
// - SReT marks recursive passes by position ((i+2) % 4 == 0), which is right only for two
//   applications per block; here every application after a block's first is recursive.
// - SReT draws a fresh random permutation in every recursive pass, in evaluation too. Here
//   evaluation draws from a generator seeded afresh at each forward, so an evaluation is
//   deterministic and two inference settings on the same weights see the same
//   permutations wherever their token counts agree; training draws from the global
//   generator as SReT does.
// - No drop path, no distillation head; dropout on residual branches (`dropout`, 0).
// - 1-D signals run the same layout on a 1-D grid (conv1d stem and pooling).
//
// Inference settings (MergeOver): `merge` applies ToMe's bipartite soft matching
// (suite/nn/token_merging.h) between the attention and the MLP of a block, on the keys
// averaged over heads, size-weighted, with proportional attention (`proportional`) in
// every later attention of the stage; token sizes are permuted with the tokens in the
// recursive passes and sliced with them into groups. `schedule = "stage"` merges
// floor(rho N) tokens at each stage's first block application and holds the count through
// the stage; `"layer"` merges `r` at every block application. Either count is moved to
// MergeOver's rule (suite/nn/merge_rate.h: (N - r) divisible by lcm(groups1, groups2),
// N - r >= that, r <= N / 2). Before each pooling (the two conv poolings and the head's
// mean) the stage's merges are undone by `unmerge` (duplicate, zero, neighbour-mean, exact:
// token_merging.h). Merging in the head's pooling too is our choice: with duplicate it is
// ToMe's size-weighted mean.
//
// FLOPs (multiply-add = 2), unmerged: the stem convolutions, every Linear, attention scores
// and values within groups (N * N/g * W each), the depthwise poolings, the head.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/options/normalization.h>

#include <cmath>
#include <map>

#include "baselines/sret/sliced_attention.h"
#include "suite/contracts/model.h"
#include "suite/nn/cpu/dropout.h"
#include "suite/nn/cpu/layer_norm.h"
#include "suite/nn/input_stem.h"
#include "suite/nn/merge_rate.h"
#include "suite/nn/token_merging.h"
#include "suite/registry/registry.h"

namespace lrb {
namespace {

// Seeds the evaluation permutations (see above): any fixed value serves.
constexpr std::uint64_t kEvalPermutationSeed = 0x5e7a11;

struct StagePlan {
  std::int64_t width, heads, depth, blocks, loops, groups1, groups2;
  std::vector<std::int64_t> grid;
  std::int64_t tokens() const {
    std::int64_t n = 1;
    for (auto g : grid) n *= g;
    return n;
  }
  std::int64_t multiple() const { return slice_multiple(groups1, groups2); }
};

struct Plan {
  Modality modality;
  std::int64_t in_channels, stem_convs, classes;
  double mlp_ratio, np_mlp_ratio, dropout;
  std::vector<std::int64_t> stem_widths;
  std::vector<std::vector<std::int64_t>> stem_grids;  // after each stem conv
  std::vector<StagePlan> stages;
};

std::vector<std::int64_t> halved(std::vector<std::int64_t> grid) {
  for (auto& g : grid) g = (g + 1) / 2;  // kernel 3, stride 2, padding 1
  return grid;
}

std::vector<std::int64_t> ints(const json& o, const char* key) { return o.at(key).get<std::vector<std::int64_t>>(); }

Plan plan_of(const json& o, const TaskInfo& t) {
  Plan p;
  p.modality = t.modality;
  p.in_channels = t.modality == Modality::Grid ? t.input_shape.at(0) : t.input_shape.at(1);
  p.stem_convs = o.at("stem_convs");
  p.classes = t.num_classes;
  p.mlp_ratio = o.at("mlp_ratio");
  p.np_mlp_ratio = o.at("np_mlp_ratio");
  p.dropout = o.at("dropout");
  const auto widths = ints(o, "widths"), heads = ints(o, "heads"), depths = ints(o, "depths"), blocks = ints(o, "blocks");
  const auto g1 = ints(o, "groups1"), g2 = ints(o, "groups2");
  std::vector<std::int64_t> grid = t.modality == Modality::Grid ? std::vector<std::int64_t>{t.input_shape.at(1), t.input_shape.at(2)}
                                                                : std::vector<std::int64_t>{t.input_shape.at(0)};
  for (std::int64_t i = 0; i < p.stem_convs; ++i) {
    grid = halved(grid);
    p.stem_grids.push_back(grid);
    p.stem_widths.push_back(i == 0 && p.stem_convs > 1 ? std::max<std::int64_t>(1, widths[0] / 2) : widths[0]);
  }
  if (p.stem_convs == 0) {  // one stride-1 conv: the input's own grid
    p.stem_grids.push_back(grid);
    p.stem_widths.push_back(widths[0]);
  }
  for (std::size_t s = 0; s < widths.size(); ++s) {
    if (s > 0) grid = halved(grid);
    p.stages.push_back({widths[s], heads[s], depths[s], blocks[s], depths[s] / blocks[s], g1[s], g2[s], grid});
  }
  return p;
}

std::int64_t product(const std::vector<std::int64_t>& v) {
  std::int64_t n = 1;
  for (auto x : v) n *= x;
  return n;
}

// One stride-2 conv of the stem or a pooling, on a 1-D or 2-D grid.
class GridConvImpl : public torch::nn::Module {
 public:
  GridConvImpl(bool two_d, std::int64_t in, std::int64_t out, std::int64_t groups, bool norm, std::int64_t stride = 2)
      : two_d_(two_d) {
    if (two_d) {
      conv2_ = register_module("conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 3).stride(stride).padding(1).groups(groups)));
      if (norm) bn2_ = register_module("bn", torch::nn::BatchNorm2d(out));
    } else {
      conv1_ = register_module("conv", torch::nn::Conv1d(torch::nn::Conv1dOptions(in, out, 3).stride(stride).padding(1).groups(groups)));
      if (norm) bn1_ = register_module("bn", torch::nn::BatchNorm1d(out));
    }
  }
  // [B, C, grid...] -> [B, C', grid/2...]; with norm: BatchNorm then ReLU (the stem).
  at::Tensor forward(const at::Tensor& x) {
    if (two_d_) return bn2_ ? at::relu(bn2_->forward(conv2_->forward(x))) : conv2_->forward(x);
    return bn1_ ? at::relu(bn1_->forward(conv1_->forward(x))) : conv1_->forward(x);
  }

 private:
  bool two_d_;
  torch::nn::Conv2d conv2_{nullptr};
  torch::nn::Conv1d conv1_{nullptr};
  torch::nn::BatchNorm2d bn2_{nullptr};
  torch::nn::BatchNorm1d bn1_{nullptr};
};
TORCH_MODULE(GridConv);

at::Tensor coefficient() { return at::ones({1}); }

LayerNorm layer_norm_module(std::int64_t dim) {
  return LayerNorm(torch::nn::LayerNormOptions({dim}).eps(1e-6));
}

// SReT's Transformer_Block, split where ToMe merges: after the attention's residual sum.
class SretBlockImpl : public torch::nn::Module {
 public:
  SretBlockImpl(std::int64_t dim, std::int64_t heads, double mlp_ratio, double dropout) : heads_(heads) {
    const auto hidden = static_cast<std::int64_t>(static_cast<double>(dim) * mlp_ratio);
    norm1_ = register_module("norm1", layer_norm_module(dim));
    qkv_ = register_module("qkv", torch::nn::Linear(dim, 3 * dim));
    proj_ = register_module("proj", torch::nn::Linear(dim, dim));
    norm2_ = register_module("norm2", layer_norm_module(dim));
    fc1_ = register_module("fc1", torch::nn::Linear(dim, hidden));
    fc2_ = register_module("fc2", torch::nn::Linear(hidden, dim));
    drop_ = register_module("drop", Dropout(dropout));
    for (int i = 0; i < 4; ++i) c_[i] = register_parameter("coefficient" + std::to_string(i + 1), coefficient());
  }

  // x*c1 + c2*attention(LN(x)). perm (recursive passes): the token order the groups are cut
  // from, undone on the output; sizes [B, N, 1] go through the same permutation. metric:
  // set to the keys averaged over heads, in x's order (ToMe's similarity).
  at::Tensor attend(const at::Tensor& x, const at::Tensor& size, std::int64_t groups, const at::Tensor& perm, at::Tensor* metric) {
    const auto B = x.size(0), N = x.size(1), C = x.size(2);
    at::Tensor xn = norm1_->forward(x), s = size.defined() ? size.squeeze(-1) : size;
    if (perm.defined()) {
      xn = xn.index_select(1, perm);
      if (s.defined()) s = s.index_select(1, perm);
    }
    const auto h = qkv_->forward(xn).view({B, N, 3, heads_, C / heads_}).unbind(2);  // why: suite/nn/encoder_layer.cpp
    at::Tensor out = sliced_attention(h[0].transpose(1, 2), h[1].transpose(1, 2), h[2].transpose(1, 2), groups, s).transpose(1, 2).reshape({B, N, C});
    at::Tensor keys = metric ? h[1].mean(2) : at::Tensor();  // over the heads of [B, N, H, d]
    if (perm.defined()) {
      const at::Tensor inverse = at::argsort(perm);
      out = out.index_select(1, inverse);
      if (metric) keys = keys.index_select(1, inverse);
    }
    if (metric) *metric = keys;
    return x * c_[0] + c_[1] * drop_->forward(proj_->forward(out));
  }

  at::Tensor mlp(const at::Tensor& x) {
    return x * c_[2] + c_[3] * drop_->forward(fc2_->forward(drop_->forward(at::gelu(fc1_->forward(norm2_->forward(x))))));
  }

 private:
  std::int64_t heads_;
  LayerNorm norm1_{nullptr}, norm2_{nullptr};
  torch::nn::Linear qkv_{nullptr}, proj_{nullptr}, fc1_{nullptr}, fc2_{nullptr};
  Dropout drop_{nullptr};
  at::Tensor c_[4];
};
TORCH_MODULE(SretBlock);

// SReT's Non_proj: the small MLP after every block application (not shared).
class NonProjImpl : public torch::nn::Module {
 public:
  NonProjImpl(std::int64_t dim, double ratio, double dropout) {
    const auto hidden = std::max<std::int64_t>(1, static_cast<std::int64_t>(static_cast<double>(dim) * ratio));
    norm_ = register_module("norm", layer_norm_module(dim));
    fc1_ = register_module("fc1", torch::nn::Linear(dim, hidden));
    fc2_ = register_module("fc2", torch::nn::Linear(hidden, dim));
    drop_ = register_module("drop", Dropout(dropout));
    c1_ = register_parameter("coefficient1", coefficient());
    c2_ = register_parameter("coefficient2", coefficient());
  }
  at::Tensor forward(const at::Tensor& x) {
    return x * c1_ + c2_ * drop_->forward(fc2_->forward(drop_->forward(at::gelu(fc1_->forward(norm_->forward(x))))));
  }

 private:
  LayerNorm norm_{nullptr};
  torch::nn::Linear fc1_{nullptr}, fc2_{nullptr};
  Dropout drop_{nullptr};
  at::Tensor c1_, c2_;
};
TORCH_MODULE(NonProj);

struct Inference {
  bool merge = false;
  std::string schedule = "stage";
  double rho = 0.25;
  std::int64_t r = 0;
  UnmergeMode unmerge = UnmergeMode::Duplicate;
  bool proportional = true;
  json settings = json::object();
};

Inference inference_of(const json& s) {
  Inference inf;
  auto get = [&](const char* key) -> const json* { return s.contains(key) && !s.at(key).is_null() ? &s.at(key) : nullptr; };
  if (auto* v = get("merge")) inf.merge = v->get<bool>();
  if (auto* v = get("schedule")) inf.schedule = v->get<std::string>();
  if (auto* v = get("rho")) inf.rho = v->get<double>();
  if (auto* v = get("r")) inf.r = v->get<std::int64_t>();
  if (auto* v = get("unmerge")) inf.unmerge = parse_unmerge_mode(v->get<std::string>());
  if (auto* v = get("proportional")) inf.proportional = v->get<bool>();
  inf.settings = s;
  return inf;
}

class Sret final : public Model {
 public:
  explicit Sret(Plan p) : p_(std::move(p)) {
    const bool two_d = p_.modality == Modality::Grid;
    std::int64_t in = p_.in_channels;
    for (std::size_t i = 0; i < p_.stem_widths.size(); ++i) {
      stem_.push_back(register_module("stem" + std::to_string(i), GridConv(two_d, in, p_.stem_widths[i], 1, true, p_.stem_convs == 0 ? 1 : 2)));
      in = p_.stem_widths[i];
    }
    const StagePlan& first = p_.stages.front();
    pos_ = register_parameter("pos", at::randn({1, first.tokens(), first.width}) * 0.02);
    for (std::size_t s = 0; s < p_.stages.size(); ++s) {
      const StagePlan& sp = p_.stages[s];
      const std::string tag = "stage" + std::to_string(s + 1);
      blocks_.emplace_back();
      non_projs_.emplace_back();
      for (std::int64_t b = 0; b < sp.blocks; ++b)
        blocks_.back().push_back(register_module(tag + "_block" + std::to_string(b), SretBlock(sp.width, sp.heads, p_.mlp_ratio, p_.dropout)));
      for (std::int64_t a = 0; a < sp.depth; ++a)
        non_projs_.back().push_back(register_module(tag + "_np" + std::to_string(a), NonProj(sp.width, p_.np_mlp_ratio, p_.dropout)));
      if (s + 1 < p_.stages.size())
        pools_.push_back(register_module("pool" + std::to_string(s + 1), GridConv(two_d, sp.width, p_.stages[s + 1].width, sp.width, false)));
    }
    head_ = register_module("head", ClassifierHead(p_.stages.back().width, p_.classes, false));
    set_inference(json::object());
  }

  at::Tensor forward(const at::Tensor& input) override {
    probes_.clear();
    // [B, C, H, W] (grid) or [B, N, C] (signal) -> channels first -> stem -> [B, N, W].
    at::Tensor x = p_.modality == Modality::Grid ? input : input.transpose(1, 2);
    for (auto& conv : stem_) x = conv->forward(x);
    x = x.flatten(2).transpose(1, 2) + pos_;
    c10::optional<at::Generator> gen;
    if (!is_training()) gen = at::make_generator<at::CPUGeneratorImpl>(kEvalPermutationSeed);
    for (std::size_t s = 0; s < p_.stages.size(); ++s) {
      x = stage(s, x, gen);
      if (probing_) probes_.emplace_back(s + 1 < p_.stages.size() ? "pool" + std::to_string(s + 1) : "head", x.detach());
      if (s + 1 < p_.stages.size()) {
        const auto B = x.size(0), C = x.size(2);
        std::vector<std::int64_t> shape = {B, C};
        for (auto g : p_.stages[s].grid) shape.push_back(g);
        x = pools_[s]->forward(x.transpose(1, 2).reshape(shape)).flatten(2).transpose(1, 2);
      }
    }
    return head_->forward(x, {});
  }

  void set_inference(const json& settings) override {
    inf_ = inference_of(settings);
    // The merge counts depend only on the token counts: fixed once per setting.
    merge_r_.clear();
    for (const auto& sp : p_.stages) {
      std::vector<std::int64_t> rs(static_cast<std::size_t>(sp.depth), 0);
      if (inf_.merge) {
        std::int64_t n = sp.tokens();
        if (inf_.schedule == "stage") {
          rs[0] = stage_merge_count(n, inf_.rho, sp.multiple());
        } else {
          for (auto& r : rs) {
            r = merge_count(n, inf_.r, sp.multiple());
            n -= r;
          }
        }
      }
      merge_r_.push_back(rs);
    }
  }

  void set_probing(bool on) override {
    probing_ = on;
    if (!on) probes_.clear();
  }
  std::vector<std::pair<std::string, at::Tensor>> probes() const override { return probes_; }

  json records() const override {
    json stages = json::array();
    for (std::size_t s = 0; s < p_.stages.size(); ++s) {
      const StagePlan& sp = p_.stages[s];
      std::int64_t kept = sp.tokens();
      for (auto r : merge_r_[s]) kept -= r;
      stages.push_back({{"grid", sp.grid},
                        {"tokens", sp.tokens()},
                        {"width", sp.width},
                        {"heads", sp.heads},
                        {"blocks", sp.blocks},
                        {"applications", sp.depth},
                        {"groups", {sp.groups1, sp.groups2}},
                        {"slice_multiple", sp.multiple()},
                        {"merge_r", merge_r_[s]},
                        {"tokens_after_merging", kept}});
    }
    return {{"stages", stages}, {"inference", inf_.settings}};
  }

 private:
  at::Tensor stage(std::size_t s, at::Tensor x, const c10::optional<at::Generator>& gen) {
    const StagePlan& sp = p_.stages[s];
    MergeStack stack(inf_.merge && inf_.unmerge == UnmergeMode::Exact);
    at::Tensor size;  // [B, N, 1] once a token is merged
    std::size_t app = 0;
    for (std::int64_t b = 0; b < sp.blocks; ++b) {
      for (std::int64_t l = 0; l < sp.loops; ++l, ++app) {
        const bool recursive = l > 0;
        const std::int64_t groups = recursive ? sp.groups2 : sp.groups1;
        at::Tensor perm;
        if (recursive && groups > 1) {
          perm = gen ? at::randperm(x.size(1), *gen, at::TensorOptions(at::kLong)) : at::randperm(x.size(1), at::TensorOptions(at::kLong));
          perm = perm.to(x.device());
        }
        const std::int64_t r = merge_r_[s][app];
        at::Tensor metric;
        SretBlock& block = blocks_[s][static_cast<std::size_t>(b)];
        x = block->attend(x, inf_.proportional ? size : at::Tensor(), groups, perm, r > 0 ? &metric : nullptr);
        if (r > 0) {
          MergedTokens merged = stack.merge(bipartite_soft_matching(metric, r), x, size);
          x = merged.x;
          size = merged.size;
        }
        x = block->mlp(x);
        x = non_projs_[s][app]->forward(x);
      }
    }
    if (!stack.empty()) x = stack.unmerge(x, inf_.unmerge, sp.grid);
    return x;
  }

  Plan p_;
  std::vector<GridConv> stem_;
  at::Tensor pos_;
  std::vector<std::vector<SretBlock>> blocks_;
  std::vector<std::vector<NonProj>> non_projs_;
  std::vector<GridConv> pools_;
  ClassifierHead head_{nullptr};
  Inference inf_;
  std::vector<std::vector<std::int64_t>> merge_r_;
  bool probing_ = false;
  std::vector<std::pair<std::string, at::Tensor>> probes_;
};

double sret_flops(const json& o, const TaskInfo& t) {
  const Plan p = plan_of(o, t);
  const double kernel = p.modality == Modality::Grid ? 9.0 : 3.0;
  double f = 0;
  std::int64_t in = p.in_channels;
  for (std::size_t i = 0; i < p.stem_widths.size(); ++i) {
    f += 2 * static_cast<double>(product(p.stem_grids[i]) * p.stem_widths[i] * in) * kernel;
    in = p.stem_widths[i];
  }
  for (std::size_t s = 0; s < p.stages.size(); ++s) {
    const StagePlan& sp = p.stages[s];
    const double n = static_cast<double>(sp.tokens()), w = static_cast<double>(sp.width);
    const double hidden = std::floor(w * p.mlp_ratio), np_hidden = std::max(1.0, std::floor(w * p.np_mlp_ratio));
    for (std::int64_t a = 0; a < sp.depth; ++a) {
      const double g = static_cast<double>(a % sp.loops == 0 ? sp.groups1 : sp.groups2);
      f += 2 * n * w * 3 * w + 2 * n * w * w + 2 * 2 * n * w * hidden;  // qkv, proj, MLP
      f += 2 * 2 * n * (n / g) * w;                                     // scores and values within groups
      f += 2 * 2 * n * w * np_hidden;                                   // Non_proj
    }
    if (s + 1 < p.stages.size())
      f += 2 * static_cast<double>(product(p.stages[s + 1].grid) * p.stages[s + 1].width) * kernel;
  }
  return f + 2 * static_cast<double>(p.stages.back().width * p.classes);
}

struct Preset {
  std::vector<std::int64_t> widths, heads, depths, blocks, groups1, groups2;
  double mlp_ratio, np_mlp_ratio;
  std::int64_t stem_convs;
};

const std::map<std::string, Preset>& presets() {
  // SReT.py: widths = base_dims x heads; recursive_num = blocks.
  static const std::map<std::string, Preset> p = {
      {"tiny", {{32, 64, 128}, {1, 2, 4}, {2, 2, 2}, {1, 1, 1}, {4, 1, 1}, {2, 1, 1}, 2.0, 1.0, 1}},
      {"T", {{64, 128, 256}, {2, 4, 8}, {4, 10, 6}, {2, 5, 3}, {8, 4, 1}, {2, 1, 1}, 3.6, 1.0, 3}},
      {"LT", {{64, 128, 256}, {2, 4, 8}, {4, 10, 6}, {2, 5, 3}, {8, 4, 1}, {2, 1, 1}, 4.0, 1.0, 3}},
      {"S", {{126, 252, 504}, {3, 6, 12}, {4, 10, 6}, {2, 5, 3}, {8, 4, 1}, {2, 1, 1}, 3.0, 2.0, 3}},
  };
  return p;
}

void resolve_sret(json& o, const json& ctx) {
  const Preset& pre = presets().at(o["preset"].get<std::string>());
  auto fill = [&](const char* key, const json& v) {
    if (o[key].is_null()) o[key] = v;
  };
  fill("widths", pre.widths);
  fill("heads", pre.heads);
  fill("depths", pre.depths);
  fill("blocks", pre.blocks);
  fill("groups1", pre.groups1);
  fill("groups2", pre.groups2);
  fill("mlp_ratio", pre.mlp_ratio);
  fill("np_mlp_ratio", pre.np_mlp_ratio);
  fill("stem_convs", pre.stem_convs);
  const auto widths = ints(o, "widths");
  const std::size_t stages = widths.size();
  for (const char* key : {"heads", "depths", "blocks", "groups1", "groups2"})
    if (ints(o, key).size() != stages)
      throw OptionError(std::vector<std::string>{key, "widths"}, std::string(key) + " has " + std::to_string(ints(o, key).size()) +
                                                                   " entries but widths has " + std::to_string(stages) + " stages");
  if (stages == 0) throw OptionError("widths", "widths needs at least one stage");
  const auto heads = ints(o, "heads"), depths = ints(o, "depths"), blocks = ints(o, "blocks");
  for (std::size_t s = 0; s < stages; ++s) {
    const std::string stage = "stage " + std::to_string(s + 1);
    if (widths[s] % heads[s] != 0)
      throw OptionError(std::vector<std::string>{"heads", "widths"}, stage + ": width " + std::to_string(widths[s]) +
                                                                         " is not divisible by " + std::to_string(heads[s]) + " heads");
    if (depths[s] % blocks[s] != 0)
      throw OptionError(std::vector<std::string>{"depths", "blocks"},
                        stage + ": " + std::to_string(depths[s]) + " block applications cannot be shared evenly by " +
                            std::to_string(blocks[s]) + " blocks (depths must be a multiple of blocks)");
    if (s > 0 && widths[s] % widths[s - 1] != 0)
      throw OptionError("widths", stage + ": the depthwise pooling widens " + std::to_string(widths[s - 1]) + " channels to " +
                                      std::to_string(widths[s]) + "; the new width must be a multiple of the old");
  }
  const Plan p = plan_of(o, TaskInfo::from_json(ctx));
  for (std::size_t s = 0; s < stages; ++s) {
    const StagePlan& sp = p.stages[s];
    if (sp.tokens() % sp.multiple() != 0)
      throw OptionError(std::vector<std::string>{"groups1", "groups2", "stem_convs"},
                        "stage " + std::to_string(s + 1) + " has " + std::to_string(sp.tokens()) +
                            " tokens, not divisible into groups of lcm(groups1, groups2) = " + std::to_string(sp.multiple()) +
                            " (change the groups, the stem, or the input size)");
  }
}

OptionSchema inference_schema() {
  OptionSchema s;
  s.options = {
      {"merge", OptionType::Bool, json(false), "merge tokens at inference (ToMe's bipartite soft matching, placed as MergeOver does)"},
      {"schedule", OptionType::String, json("stage"),
       "stage: floor(rho N) tokens merged at each stage's first block application, held through the stage; layer: r "
       "tokens at every block application (each count moved to MergeOver's rule)",
       {"stage", "layer"}},
      {"rho", OptionType::Float, json(), "stage schedule: the fraction of a stage's tokens merged (0.25)", {}, 0.0, 0.5, true},
      {"r", OptionType::Int, json(), "layer schedule: tokens merged at every block application", {}, 0, 1 << 20, true},
      {"unmerge", OptionType::String, json("duplicate"),
       "how the grid is restored before each pooling: duplicate (ToMe, the paper), zero, neighbour-mean (nearest "
       "surviving tokens on the grid), exact (each token as before the merge plus its merged token's change: the upper bound)",
       unmerge_mode_names()},
      {"proportional", OptionType::Bool, json(true), "proportional attention: log token size added to the key logits (ToMe)"},
  };
  for (auto& o : s.options) o.axis = false;  // a variant is one setting
  s.resolve = [](json& o, const json&) {
    // A count of tokens to merge on a variant that merges none is a mistake, not a setting.
    if (o["merge"] == false)
      for (const char* key : {"rho", "r"})
        if (!o[key].is_null())
          throw OptionError(key, std::string(key) + " sets how many tokens merge, but merge = false: set merge = true, or leave " +
                                     key + " out");
    if (o["schedule"] == "stage") {
      if (!o["r"].is_null()) throw OptionError("r", "r is the layer schedule's count; with schedule = \"stage\" give rho");
      if (o["rho"].is_null()) o["rho"] = 0.25;
      o["r"] = 0;
    } else {
      if (!o["rho"].is_null()) throw OptionError("rho", "rho is the stage schedule's fraction; with schedule = \"layer\" give r");
      if (o["r"].is_null()) throw OptionError("r", "schedule = \"layer\" needs r, the tokens merged at every block application");
      o["rho"] = 0.0;
    }
  };
  return s;
}

ModelEntry sret_entry() {
  ModelEntry e;
  e.name = "sret";
  e.summary = "SReT: sliced recursive transformer (weight-shared blocks applied recursively, sliced group attention, conv pooling); "
              "MergeOver's token merging as inference settings";
  e.modalities = {Modality::Signal, Modality::Grid};
  const char* from_preset = " (default from the preset)";
  e.schema.options = {
      {"preset", OptionType::String, json("tiny"),
       "tiny (ours: widths 32/64/128, one stem conv) or SReT's T, LT, S", {"tiny", "T", "LT", "S"}},
      {"widths", OptionType::IntList, json(), std::string("channels per stage") + from_preset, {}, 1, 8192, true},
      {"heads", OptionType::IntList, json(), std::string("attention heads per stage") + from_preset, {}, 1, 256, true},
      {"depths", OptionType::IntList, json(), std::string("block applications per stage") + from_preset, {}, 1, 256, true},
      {"blocks", OptionType::IntList, json(), std::string("weight-shared blocks per stage, each applied depths/blocks times") + from_preset, {}, 1, 256, true},
      {"groups1", OptionType::IntList, json(), std::string("groups of a block's first application (sliced attention)") + from_preset, {}, 1, 4096, true},
      {"groups2", OptionType::IntList, json(), std::string("groups of its recursive applications (tokens permuted first)") + from_preset, {}, 1, 4096, true},
      {"mlp_ratio", OptionType::Float, json(), std::string("block MLP hidden width / width") + from_preset, {}, 0.25, 16.0, true},
      {"np_mlp_ratio", OptionType::Float, json(), std::string("hidden width / width of the MLP after each application") + from_preset, {}, 0.25, 16.0, true},
      {"stem_convs", OptionType::Int, json(),
       std::string("stride-2 3x3 convolutions (BatchNorm, ReLU) in the stem; 0: one stride-1 conv, the input's own grid (ours: "
                   "SReT-T's 28x28 first stage from a 28x28 image)") + from_preset, {}, 0, 6, true},
      {"dropout", OptionType::Float, json(0.0), "dropout on residual branches", {}, 0.0, 0.9},
  };
  e.schema.resolve = resolve_sret;
  e.inference = inference_schema();
  e.flops = sret_flops;
  e.small_options = {{"widths", {8, 16, 32}}, {"heads", {1, 2, 2}}, {"groups1", {2, 1, 1}}, {"groups2", {2, 1, 1}}};
  e.make = [](const json& o, const TaskInfo& t) -> std::shared_ptr<Model> { return std::make_shared<Sret>(plan_of(o, t)); };
  e.params = params_by_building(e.make);
  return e;
}

LRB_REGISTER_MODEL(sret_entry());

}  // namespace
}  // namespace lrb
