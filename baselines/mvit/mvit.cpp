// Multiscale vision transformers, MViT v1 (arXiv 2104.11227) and v2 (arXiv 2112.01526), on
// 2-D grids and on 1-D sequences (the same design with pooling along the sequence). The
// defaults follow the authors' reference code (PySlowFast for v1's ImageNet MViT-B-16,
// facebookresearch/mvit for v2).
//
// Layout: stem -> stages of pooling-attention blocks -> LayerNorm on every token
// -> class token or mean -> Linear (the reference normalises, then pools).
// - Stem: the shared InputStem with patch 4 (default) is MViT's patch stem: conv kernel 7,
//   stride 4, padding 3 (2-D), and the same along a 1-D signal; token ids are embedded.
//   `abs_pos`: learned absolute positions after the stem, on for v1 (as its reference), off
//   for v2 (its reference has none: the relative positions carry position). The option
//   stays because the v2 paper ablates exactly this (absolute against relative positions),
//   and because v2 with rel_pos off would otherwise see no position but the conv borders.
//   v1's reference also gives the class token a position; a learned class token plus a
//   learned offset is one learned vector, so we leave that out (96 parameters).
// - Stages: depths per preset (tiny [1,1,1,1], T [1,2,5,2], S [1,2,11,2], B [2,3,16,3], or
//   `depths`); width `dim` (96) and `heads` (1) at stage 1. The first block of every later
//   stage strides Q by `q_stride` (2) per axis and doubles the heads; the width doubles
//   there too (v2: inside that block's attention, "dim_mul_in_att"; v1: in the MLP of the
//   block before it, whose skip is then projected from its norm2 output, as in PySlowFast).
// - K/V stride starts at `kv_stride` (4) per axis and is divided by each Q stride (min 1),
//   so stage 1 attends to a 4x (per axis) coarser K/V grid and the last stages to full.
// - Pooling (suite/nn/attention/pooling.h): `pool_mode` conv (depthwise conv + LayerNorm;
//   both versions use it for images), max or avg, kernel `pool_kernel` (3) with padding
//   kernel/2. K and V are pooled in every block; Q in every block for v2 (stride 1 outside
//   the strided blocks), only in the Q-strided blocks for v1 (as both references do).
// - Skip connection: max-pooled (kernel s+1, stride s, padding s/2) where Q is strided;
//   projected (Linear) where the width changes. q_stride must be even so that this skip and
//   the kernel-3 Q pooling give the same grid.
// - v2 only (on by default, options for ablations): decomposed relative positions and the
//   residual pooling connection. v1: neither.
// - 1-D sequences: grids are {T}; strides apply along the sequence (q_stride 2 halves it).
// - Padding (token inputs; the reference never pads, so the rule is ours): padding acts as
//   the end of the sequence. The padding mask goes into every pooling attention, which
//   zeroes padded positions before conv/avg pooling and leaves them out of max pooling (as
//   the grid's border), masks pooled keys centred on padding, and pools the mask with Q; the
//   strided skip max-pools real tokens only, and the head averages real tokens only. So a
//   sample padded at its end gets the logits of the same sample unpadded (given the same
//   weights: abs_pos and rel_pos tables are sized by the grid), whatever its padding holds.
//
// FLOPs (multiply-add = 2): every Linear as a matrix product; conv pooling as its depthwise
// multiply-adds (output positions x kernel volume x channels; max/avg pooling and
// LayerNorms count none); attention scores and AV over the pooled grids, (Nq'+cls) x
// (Nkv'+cls) x width each; the rel-pos term as the kernel computes it (every pooled query
// times the rows of each axis table it multiplies: 2*max(q, kv)-1, or 2*kv on the
// residue-class path); the stem; the head's Linear.
#include "baselines/mvit/mvit.h"

#include <ATen/ATen.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/options/normalization.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "suite/contracts/model.h"
#include "suite/nn/attention/pooling.h"
#include "suite/nn/cpu/dropout.h"
#include "suite/nn/cpu/layer_norm.h"
#include "suite/nn/input_stem.h"

namespace lrb {
namespace {

std::int64_t product(const std::vector<std::int64_t>& v) {
  std::int64_t p = 1;
  for (auto x : v) p *= x;
  return p;
}

struct BlockPlan {
  std::int64_t stage, dim_in, attn_dim, dim_out, heads, stride_q, stride_kv;
  std::int64_t kernel_q;  // 1: Q not pooled (v1's unstrided blocks)
  std::vector<std::int64_t> grid_in, grid_out, kv_grid;
};

struct Plan {
  bool v2, cls, rel_pos, residual_pooling, abs_pos;
  PoolMode mode;
  std::string mode_name;
  std::int64_t kernel, mlp_ratio, classes;
  double dropout;
  StemConfig stem;
  std::vector<std::int64_t> depths;
  std::vector<BlockPlan> blocks;
};

Plan plan_of(const json& o, const TaskInfo& task, bool v2) {
  Plan p;
  p.v2 = v2;
  p.cls = o.at("pooling") == "cls";
  p.rel_pos = v2 && o.at("rel_pos").get<bool>();
  p.residual_pooling = v2 && o.at("residual_pooling").get<bool>();
  p.mode_name = o.at("pool_mode");
  p.mode = parse_pool_mode(p.mode_name);
  p.kernel = o.at("pool_kernel");
  p.mlp_ratio = o.at("mlp_ratio");
  p.classes = task.num_classes;
  p.dropout = o.at("dropout");
  p.abs_pos = o.at("abs_pos");
  p.stem = stem_config(o, o.at("dim"));
  p.stem.positions = p.abs_pos;
  p.depths = o.at("depths").get<std::vector<std::int64_t>>();
  const std::int64_t q_stride = o.at("q_stride");
  std::int64_t width = o.at("dim"), heads = o.at("heads"), kv = o.at("kv_stride");
  std::vector<std::int64_t> grid = stem_grid(task, p.stem);
  const std::size_t axes = grid.size();
  for (std::size_t s = 0; s < p.depths.size(); ++s) {
    for (std::int64_t i = 0; i < p.depths[s]; ++i) {
      BlockPlan b;
      b.stage = static_cast<std::int64_t>(s);
      const bool strided = s > 0 && i == 0;
      if (strided) {
        kv = std::max<std::int64_t>(1, kv / q_stride);
        heads *= 2;
      }
      b.heads = heads;
      b.stride_q = strided ? q_stride : 1;
      // The reference pools Q where it is strided (v1) or in every block (v2).
      b.kernel_q = v2 || strided ? p.kernel : 1;
      b.stride_kv = kv;
      b.dim_in = width;
      if (v2) {
        b.attn_dim = b.dim_out = strided ? 2 * width : width;
      } else {
        const bool next_strided = i + 1 == p.depths[s] && s + 1 < p.depths.size();
        b.attn_dim = width;
        b.dim_out = next_strided ? 2 * width : width;
      }
      width = b.dim_out;
      b.grid_in = grid;
      const std::vector<std::int64_t> kernel(axes, p.kernel);
      b.grid_out = pooled_grid(grid, std::vector<std::int64_t>(axes, b.kernel_q), std::vector<std::int64_t>(axes, b.stride_q));
      b.kv_grid = pooled_grid(grid, kernel, std::vector<std::int64_t>(axes, b.stride_kv));
      grid = b.grid_out;
      p.blocks.push_back(b);
    }
  }
  return p;
}

PoolingAttentionOptions attention_options(const Plan& p, const BlockPlan& b, std::uint64_t seed) {
  PoolingAttentionOptions a;
  a.heads = b.heads;
  a.head_dim = b.attn_dim / b.heads;
  a.grid = b.grid_in;
  a.mode = p.mode;
  a.kernel = {p.kernel};
  a.kernel_q = {b.kernel_q};
  a.stride_q = {b.stride_q};
  a.stride_kv = {b.stride_kv};
  a.rel_pos = p.rel_pos;
  a.residual_pooling = p.residual_pooling;
  a.cls_token = p.cls;
  a.seed = seed;
  return a;
}

// The Q-strided block's skip: max-pools tokens [B, cls + prod(grid), C] over the grid (the
// class token passes as is). Padded tokens (keep false) are left out like the border, and
// pooled tokens centred on padding are zero (PoolingAttention's rule: its pooled Q has the
// same centres, stride * i, so the two masks agree).
at::Tensor pool_tokens(const at::Tensor& x, const at::Tensor& keep, const std::vector<std::int64_t>& grid,
                       std::int64_t kernel, std::int64_t stride, bool cls) {
  const std::int64_t B = x.size(0), C = x.size(2), c = cls ? 1 : 0;
  const std::int64_t pad = kernel / 2;
  const bool two_d = grid.size() == 2;
  auto max_pool = [&](const at::Tensor& channels_first) {
    return two_d ? at::max_pool2d(channels_first, {kernel, kernel}, {stride, stride}, {pad, pad})
                 : at::max_pool1d(channels_first, {kernel}, {stride}, {pad});
  };
  std::vector<std::int64_t> shape{B};
  shape.insert(shape.end(), grid.begin(), grid.end());
  shape.push_back(C);
  at::Tensor body = x.narrow(1, c, x.size(1) - c);
  at::Tensor pooled_keep;
  if (keep.defined()) {
    const at::Tensor body_keep = keep.narrow(1, c, keep.size(1) - c);
    body = body.masked_fill(body_keep.logical_not().unsqueeze(-1), -std::numeric_limits<double>::infinity());
    std::vector<std::int64_t> kshape{B};
    kshape.insert(kshape.end(), grid.begin(), grid.end());
    pooled_keep = body_keep.reshape(kshape);
    for (std::size_t a = 0; a < grid.size(); ++a)
      pooled_keep = pooled_keep.slice(static_cast<std::int64_t>(a) + 1, 0, grid[a], stride);
    pooled_keep = pooled_keep.reshape({B, -1});
  }
  at::Tensor y = body.reshape(shape);
  y = two_d ? max_pool(y.permute({0, 3, 1, 2})).permute({0, 2, 3, 1})
            : max_pool(y.permute({0, 2, 1})).permute({0, 2, 1});
  y = y.reshape({B, -1, C});
  if (pooled_keep.defined()) y = y.masked_fill(pooled_keep.logical_not().unsqueeze(-1), 0.0);
  return cls ? at::cat({x.narrow(1, 0, 1), y}, 1) : y;
}

struct BlockImpl : torch::nn::Module {
  BlockImpl(const Plan& p, const BlockPlan& b)
      : plan(b),
        v2(p.v2),
        cls(p.cls),
        norm1(register_module("norm1", LayerNorm(torch::nn::LayerNormOptions({b.dim_in})))),
        norm2(register_module("norm2", LayerNorm(torch::nn::LayerNormOptions({b.attn_dim})))),
        qkv(register_module("qkv", torch::nn::Linear(b.dim_in, 3 * b.attn_dim))),
        proj(register_module("proj", torch::nn::Linear(b.attn_dim, b.attn_dim))),
        fc1(register_module("fc1", torch::nn::Linear(b.attn_dim, p.mlp_ratio * b.attn_dim))),
        fc2(register_module("fc2", torch::nn::Linear(p.mlp_ratio * b.attn_dim, b.dim_out))),
        drop(register_module("drop", Dropout(p.dropout))) {
    // The pooling parameters use their own generator; seeding it from torch's keeps the
    // whole initialisation a function of the run's init seed.
    const auto seed = static_cast<std::uint64_t>(
        at::randint(0, std::numeric_limits<std::int64_t>::max(), {1}, at::kLong).item<std::int64_t>());
    attn = register_module("attn", std::make_shared<PoolingAttention>(attention_options(p, b, seed)));
    if (b.dim_in != b.dim_out)  // v2: projects norm1's output; v1: norm2's
      skip_proj = register_module("skip_proj", torch::nn::Linear(v2 ? b.dim_in : b.attn_dim, b.dim_out));
  }

  // x [B, cls + prod(grid_in), dim_in] -> [B, cls + prod(grid_out), dim_out]; `keep`
  // ([B, cls + prod(grid_in)] bool, or undefined) becomes the pooled queries' mask.
  at::Tensor forward(const at::Tensor& x, at::Tensor& keep) {
    const auto B = x.size(0), n = x.size(1), H = plan.heads, dh = plan.attn_dim / plan.heads;
    const at::Tensor xn = norm1->forward(x);
    const auto h = qkv->forward(xn).view({B, n, 3, H, dh}).unbind(2);  // why unbind: suite/nn/encoder_layer.cpp
    const PoolingAttentionOutput a = attn->forward(h[0].transpose(1, 2), h[1].transpose(1, 2), h[2].transpose(1, 2), keep);
    const at::Tensor o = proj->forward(a.out.transpose(1, 2).reshape({B, a.out.size(2), plan.attn_dim}));
    at::Tensor skip = v2 && skip_proj ? skip_proj->forward(xn) : x;
    if (plan.stride_q > 1) skip = pool_tokens(skip, keep, plan.grid_in, plan.stride_q + 1, plan.stride_q, cls);
    keep = a.keep;
    at::Tensor y = skip + drop->forward(o);
    const at::Tensor yn = norm2->forward(y);
    const at::Tensor m = fc2->forward(at::gelu(fc1->forward(yn)));
    if (!v2 && skip_proj) y = skip_proj->forward(yn);
    return y + drop->forward(m);
  }

  BlockPlan plan;
  bool v2, cls;
  LayerNorm norm1, norm2;
  torch::nn::Linear qkv, proj, fc1, fc2;
  torch::nn::Linear skip_proj{nullptr};
  Dropout drop;
  std::shared_ptr<PoolingAttention> attn;
};
TORCH_MODULE(Block);

class Mvit final : public Model {
 public:
  Mvit(const Plan& plan, const TaskInfo& task) : plan_(plan) {
    stem_ = register_module("stem", InputStem(task, plan.stem));
    if (plan.cls) cls_ = register_parameter("cls", at::randn({1, 1, plan.stem.dim}) * 0.02);
    for (std::size_t i = 0; i < plan.blocks.size(); ++i)
      blocks_.push_back(register_module("block" + std::to_string(i), Block(plan, plan.blocks[i])));
    // Normalise, then pool (the reference's order; for a class token the same either way).
    head_ = register_module("head", ClassifierHead(plan.blocks.back().dim_out, plan.classes, plan.cls, true));
  }

  at::Tensor forward(const at::Tensor& x) override {
    StemOutput s = stem_->forward(x);
    at::Tensor h = s.tokens, keep = s.keep;
    if (plan_.cls) {
      h = at::cat({cls_.expand({h.size(0), 1, h.size(2)}), h}, 1);
      if (keep.defined()) keep = at::cat({at::ones({keep.size(0), 1}, keep.options()), keep}, 1);
    }
    for (auto& block : blocks_) h = block->forward(h, keep);
    return head_->forward(h, keep);
  }

  nlohmann::json records() const override {
    nlohmann::json stages = nlohmann::json::array(), blocks = nlohmann::json::array();
    for (const auto& b : plan_.blocks) {
      blocks.push_back({{"stage", b.stage}, {"dim_in", b.dim_in}, {"attn_dim", b.attn_dim}, {"dim_out", b.dim_out},
                        {"heads", b.heads}, {"kernel_q", b.kernel_q}, {"stride_q", b.stride_q}, {"stride_kv", b.stride_kv},
                        {"grid_in", b.grid_in}, {"grid", b.grid_out}, {"kv_grid", b.kv_grid}});
    }
    // A stage: its blocks' attention width, heads and token grid (after its first block's
    // Q stride), and the K/V grid of its last block.
    for (std::size_t s = 0; s < plan_.depths.size(); ++s) {
      const BlockPlan* first = nullptr;
      const BlockPlan* last = nullptr;
      for (const auto& b : plan_.blocks)
        if (b.stage == static_cast<std::int64_t>(s)) {
          if (!first) first = &b;
          last = &b;
        }
      stages.push_back({{"blocks", plan_.depths[s]}, {"dim", first->attn_dim}, {"heads", first->heads},
                        {"grid", first->grid_out}, {"kv_grid", last->kv_grid}, {"stride_kv", last->stride_kv}});
    }
    return {{"version", plan_.v2 ? "v2" : "v1"}, {"abs_pos", plan_.abs_pos}, {"stages", stages}, {"blocks", blocks}};
  }

 private:
  Plan plan_;
  InputStem stem_{nullptr};
  at::Tensor cls_;
  std::vector<Block> blocks_;
  ClassifierHead head_{nullptr};
};

// Rows of one axis' rel-pos table each pooled query multiplies (pooling.cpp's axis_logits).
double rel_rows(std::int64_t qs, std::int64_t ks) {
  const bool residue = ks <= qs && qs % ks == 0 && qs / ks > 1;
  return static_cast<double>(residue ? 2 * ks : 2 * std::max(qs, ks) - 1);
}

double mvit_flops_of(const json& o, const TaskInfo& task, bool v2) {
  const Plan p = plan_of(o, task, v2);
  const double c = p.cls ? 1 : 0, r = static_cast<double>(p.mlp_ratio);
  double f = stem_flops(task, p.stem);
  for (const auto& b : p.blocks) {
    const std::size_t axes = b.grid_in.size();
    const double n_in = static_cast<double>(product(b.grid_in)) + c;
    const double q_body = static_cast<double>(product(b.grid_out)), kv_body = static_cast<double>(product(b.kv_grid));
    const double nq = q_body + c, nkv = kv_body + c;
    const double din = static_cast<double>(b.dim_in), a = static_cast<double>(b.attn_dim);
    const double dout = static_cast<double>(b.dim_out);
    f += 2 * n_in * din * 3 * a;  // qkv
    if (p.mode == PoolMode::Conv) {
      const double volume = std::pow(static_cast<double>(p.kernel), static_cast<double>(axes));
      const bool q_active = b.kernel_q > 1 || b.stride_q > 1, kv_active = p.kernel > 1 || b.stride_kv > 1;
      if (q_active) f += 2 * q_body * volume * a;
      if (kv_active) f += 2 * 2 * kv_body * volume * a;
    }
    f += 2 * 2 * nq * nkv * a;  // QK^T and AV, all heads
    if (p.rel_pos)
      for (std::size_t ax = 0; ax < axes; ++ax) f += 2 * q_body * rel_rows(b.grid_out[ax], b.kv_grid[ax]) * a;
    f += 2 * nq * a * a;  // output projection
    if (b.dim_in != b.dim_out) f += v2 ? 2 * n_in * din * dout : 2 * nq * a * dout;  // skip projection
    f += 2 * nq * a * r * a + 2 * nq * r * a * dout;  // MLP
  }
  return f + 2 * static_cast<double>(p.blocks.back().dim_out) * static_cast<double>(p.classes);
}

const std::map<std::string, std::vector<std::int64_t>>& presets() {
  static const std::map<std::string, std::vector<std::int64_t>> p = {
      {"tiny", {1, 1, 1, 1}}, {"T", {1, 2, 5, 2}}, {"S", {1, 2, 11, 2}}, {"B", {2, 3, 16, 3}}};
  return p;
}

}  // namespace

ModelEntry mvit_entry(const MvitVersion& version) {
  ModelEntry e;
  e.name = version.name;
  e.summary = version.summary;
  e.modalities = {Modality::Tokens, Modality::Signal, Modality::Grid};
  e.schema.options = {
      {"preset", OptionType::String, json("tiny"), "blocks per stage: tiny [1,1,1,1], T [1,2,5,2], S [1,2,11,2], B [2,3,16,3]", {"tiny", "T", "S", "B"}},
      {"depths", OptionType::IntList, json(), "blocks per stage (default from the preset)", {}, 1, 64, true},
      {"dim", OptionType::Int, json(96), "width at stage 1; doubles where Q is strided", {}, 4, 4096},
      {"heads", OptionType::Int, json(1), "heads at stage 1 (must divide dim); double where Q is strided", {}, 1, 256},
      {"mlp_ratio", OptionType::Int, json(4), "MLP hidden width / attention width", {}, 1, 16},
      {"dropout", OptionType::Float, json(0.0), "dropout on residual branches", {}, 0.0, 0.9},
      {"pool_mode", OptionType::String, json("conv"), "q/k/v pooling: depthwise conv + LayerNorm, max or avg", {"conv", "max", "avg"}},
      {"pool_kernel", OptionType::Int, json(3), "q/k/v pooling kernel per axis (odd; padding kernel/2)", {}, 1, 15},
      {"q_stride", OptionType::Int, json(2), "Q stride per axis at the first block of stages 2.. (even: 2 or 4)", {}, 2, 4},
      {"kv_stride", OptionType::Int, json(4), "K/V stride per axis at stage 1; divided by each Q stride (min 1)", {}, 1, 64},
      {"pooling", OptionType::String, json(version.default_pooling), "sequence summary for the head: a class token, or the mean", {"cls", "mean"}},
      {"abs_pos", OptionType::Bool, json(version.default_abs_pos),
       version.v2 ? "learned absolute positions added after the stem (off: the reference relies on rel_pos; on: MViT v2's positional ablation, or positions with rel_pos off)"
                  : "learned absolute positions added after the stem (the reference's default; off: MViT v2's positional ablation)",
       {}, {}, {}},
  };
  if (version.v2) {
    e.schema.options.push_back({"rel_pos", OptionType::Bool, json(true), "decomposed relative positions in the attention logits", {}, {}, {}});
    e.schema.options.push_back({"residual_pooling", OptionType::Bool, json(true), "add the pooled Q to the attention output", {}, {}, {}});
  }
  for (auto& o : stem_option_specs(4)) e.schema.options.push_back(o);
  e.schema.resolve = [](json& o, const json&) {
    if (o["depths"].is_null()) o["depths"] = presets().at(o["preset"].get<std::string>());
    if (o["depths"].empty()) throw OptionError("depths", "depths needs at least one stage, e.g. [1, 2, 5, 2]");
    if (o["dim"].get<std::int64_t>() % o["heads"].get<std::int64_t>() != 0)
      throw OptionError(std::vector<std::string>{"heads", "dim"}, "heads (" + o["heads"].dump() + ") must divide dim (" + o["dim"].dump() + ")");
    if (o["pool_kernel"].get<std::int64_t>() % 2 == 0)
      throw OptionError("pool_kernel", "pool_kernel must be odd (padding kernel/2 keeps the grid aligned): use 1, 3 or 5");
    if (o["q_stride"].get<std::int64_t>() % 2 != 0)
      throw OptionError("q_stride", "q_stride must be 2 or 4: the skip max-pool (kernel s+1, stride s) matches the Q grid only for even s");
  };
  const bool v2 = version.v2;
  e.flops = [v2](const json& o, const TaskInfo& t) { return mvit_flops_of(o, t, v2); };
  e.small_options = {{"dim", 8}, {"heads", 1}};
  e.make = [v2](const json& o, const TaskInfo& t) -> std::shared_ptr<Model> {
    return std::make_shared<Mvit>(plan_of(o, t, v2), t);
  };
  e.params = params_by_building(e.make);
  return e;
}

}  // namespace lrb
