// Model-specific properties the zoo test (model_zoo_test.cpp) cannot see: FLOP counts
// against their formulas and their growth in N, BigBird's seeded random tables,
// Longformer's window and global CLS, mViT's stage plan, reference defaults and padding,
// MAELRE's reductions, tau readings and attention switch.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <torch/utils.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "baselines/longformer.h"
#include "suite/nn/input_stem.h"
#include "suite/registry/registry.h"
#include "suite/contracts/model.h"

namespace lrb {
namespace {

const ModelEntry& entry(const std::string& name) {
  const ModelEntry* e = ModelRegistry::instance().find(name);
  EXPECT_NE(e, nullptr) << name << " is not registered";
  return *e;
}

// Defaults, then `overrides`, then the resolve hook (as the sweep expansion does).
json resolved(const ModelEntry& e, const TaskInfo& t, const json& overrides) {
  json o = json::object();
  for (const auto& spec : e.schema.options) o[spec.name] = spec.default_value;
  for (const auto& [k, v] : overrides.items()) o[k] = v;
  if (e.schema.resolve) e.schema.resolve(o, t.to_json());
  return o;
}

TaskInfo token_task(std::int64_t n, std::int64_t vocab = 16, std::int64_t pad = -1) {
  TaskInfo t;
  t.modality = Modality::Tokens;
  t.input_shape = {n};
  t.vocab_size = vocab;
  t.pad_token = pad;
  t.num_classes = 3;
  t.metrics = {"accuracy"};
  return t;
}

TaskInfo grid_task(std::int64_t channels, std::int64_t h, std::int64_t w, std::int64_t classes = 3) {
  TaskInfo t;
  t.modality = Modality::Grid;
  t.input_shape = {channels, h, w};
  t.num_classes = classes;
  t.metrics = {"accuracy"};
  return t;
}

std::shared_ptr<Model> build(const std::string& name, const TaskInfo& t, const json& overrides, std::uint64_t seed = 3) {
  torch::manual_seed(seed);
  auto m = entry(name).make(resolved(entry(name), t, overrides), t);
  m->eval();
  return m;
}

double parameters(const Model& m) {
  double n = 0;
  for (const auto& p : m.parameters()) n += static_cast<double>(p.numel());
  return n;
}

bool has_parameter(const Model& m, const std::string& name) {
  for (const auto& p : m.named_parameters())
    if (p.key() == name) return true;
  return false;
}

// ---- FLOPs ----------------------------------------------------------------------------

TEST(ModelFlops, TransformerLayerMatchesTextbookFormula) {
  const ModelEntry e = entry("transformer");
  for (std::int64_t n : {16, 128, 1000}) {
    const TaskInfo t = token_task(n);
    const json o = resolved(e, t, {{"dim", 64}, {"depth", 1}, {"heads", 4}, {"mlp_ratio", 4}, {"pooling", "mean"}});
    const double N = static_cast<double>(n), D = 64, r = 4;
    const double layer = 2 * N * D * 3 * D          // q, k, v projections
                         + 2 * N * N * D * 2         // QK^T and AV
                         + 2 * N * D * D             // output projection
                         + 2 * 2 * N * D * (r * D);  // MLP: D -> rD -> D
    const double head = 2 * D * static_cast<double>(t.num_classes);  // token stem: a lookup, 0
    EXPECT_EQ(e.flops(o, t), layer + head) << "N = " << n;
    json deeper = o;
    deeper["depth"] = 3;
    EXPECT_EQ(e.flops(deeper, t), 3 * layer + head);
  }
}

double growth(const std::string& name, const json& overrides, std::int64_t n) {
  const ModelEntry& e = entry(name);
  const TaskInfo small = token_task(n), large = token_task(2 * n);
  return e.flops(resolved(e, large, overrides), large) / e.flops(resolved(e, small, overrides), small);
}

TEST(ModelFlops, SparseModelsGrowLinearlyTransformerQuadratically) {
  // Doubling N at a fixed window / block: about 2x for the sparse models (and the linear
  // Transformer), towards 4x for softmax attention once N dominates the width.
  for (std::int64_t n : {4096, 16384}) {
    EXPECT_NEAR(growth("longformer", json::object(), n), 2.0, 0.05) << "N = " << n;
    EXPECT_NEAR(growth("longformer", {{"window", 64}}, n), 2.0, 0.05) << "N = " << n;
    EXPECT_NEAR(growth("bigbird", json::object(), n), 2.0, 0.05) << "N = " << n;
    EXPECT_NEAR(growth("bigbird", {{"block", 32}, {"random_blocks", 2}}, n), 2.0, 0.05) << "N = " << n;
    EXPECT_NEAR(growth("transformer", {{"attention", "linear"}}, n), 2.0, 0.01) << "N = " << n;
    EXPECT_GT(growth("transformer", json::object(), n), 3.8) << "N = " << n;
  }
  // And the sparse counts sit far below dense attention's at long N.
  const TaskInfo t = token_task(16384);
  const double dense = entry("transformer").flops(resolved(entry("transformer"), t, json::object()), t);
  EXPECT_LT(entry("longformer").flops(resolved(entry("longformer"), t, json::object()), t), dense / 5);
  EXPECT_LT(entry("bigbird").flops(resolved(entry("bigbird"), t, json::object()), t), dense / 5);
}

TEST(ModelFlops, EveryModelReportsPositiveFlopsAndParameters) {
  const TaskInfo t = grid_task(1, 32, 32);
  for (const auto& [name, e] : ModelRegistry::instance().entries()) {
    if (!e.make || std::find(e.modalities.begin(), e.modalities.end(), Modality::Grid) == e.modalities.end()) continue;
    // A model built from the user's file (torchscript) counts what its file runs: TorchScriptModel.*.
    const bool required_option = std::any_of(e.schema.options.begin(), e.schema.options.end(),
                                             [](const OptionSpec& o) { return o.default_value.is_null() && !o.derived; });
    if (required_option) continue;
    const json o = resolved(e, t, e.small_options);
    EXPECT_GT(e.flops(o, t), 0) << name;
    torch::manual_seed(0);
    std::int64_t params = 0;
    for (const auto& p : e.make(o, t)->parameters()) params += p.numel();
    EXPECT_GT(params, 0) << name;
  }
}

TEST(ModelFlops, MaelreMatchesItsFormula) {
  // One block of one layer at N = 64 > D = 16 (linear attention), 2 heads, nu = 4: the
  // layer's products, the kernel attention per reading, the conv reduction (64 -> 16 tokens,
  // 16 -> 32 channels, kernel 9) after the block or not, and the head.
  const ModelEntry e = entry("maelre");
  const TaskInfo t = token_task(64);
  const double N = 64, D = 16, dh = 8, r = 4, C = static_cast<double>(t.num_classes);
  const double layer = 2 * N * D * 3 * D + 2 * N * D * D + 2 * 2 * N * D * r * D;
  const double products = 2 * N * D * dh + 2 * N * D * dh;      // psi(K)^T V, psi(Q) S
  const double normaliser = N * D + 2 * N * D + N * D;           // sum psi(k), psi(Q) z, division
  const std::map<std::string, double> attention = {
      {"row", products + normaliser},
      {"row-input", products + normaliser + 2 * N * D},  // q and k scaled by 1/sqrt(tau)
      {"output", products + N * D}};                     // / tau
  const double reduction = 2 * (N / 4) * (2 * D) * D * 9;
  for (const auto& [mode, attn] : attention) {
    const json base = {{"dim", 16}, {"depths", {1}}, {"heads", {2}}, {"tau_mode", mode}};
    json between = base;
    between["reductions"] = "between";
    EXPECT_EQ(e.flops(resolved(e, t, base), t), layer + attn + reduction + 2 * (2 * D) * C) << mode;
    EXPECT_EQ(e.flops(resolved(e, t, between), t), layer + attn + 2 * D * C) << mode;
  }
  // No merging: the reduction is a per-token linear map D -> 2D over all N tokens.
  const json none = {{"dim", 16}, {"depths", {1}}, {"heads", {2}}, {"tau_mode", "row"}, {"reduction", "none"}};
  EXPECT_EQ(e.flops(resolved(e, t, none), t), layer + attention.at("row") + 2 * N * D * 2 * D + 2 * (2 * D) * C);
  // Softmax where N <= D: QK^T and AV, no normaliser term.
  const TaskInfo short_task = token_task(12);
  const double n = 12;
  const json one = {{"dim", 16}, {"depths", {1}}, {"heads", {2}}, {"reductions", "between"}};
  EXPECT_EQ(e.flops(resolved(e, short_task, one), short_task),
            2 * n * D * 3 * D + 2 * n * D * D + 2 * 2 * n * D * r * D + 2 * 2 * n * n * D + 2 * D * C);
}

// ---- BigBird --------------------------------------------------------------------------

TEST(ModelBigBird, RecordsASeededRandomTablePerLayer) {
  const TaskInfo t = token_task(511);  // + CLS = 512 tokens = 32 blocks of 16
  const json base = {{"dim", 16}, {"depth", 2}, {"heads", 2}, {"block", 16}, {"random_blocks", 2}};
  const json a = build("bigbird", t, base, 1)->records();
  const json b = build("bigbird", t, base, 2)->records();  // another init seed: same pattern
  ASSERT_EQ(a["layers"].size(), 2u);
  EXPECT_EQ(a, b);
  for (const auto& layer : a["layers"]) {
    EXPECT_FALSE(layer["dense_fallback"].get<bool>());
    ASSERT_EQ(layer["random_blocks"].size(), 2u);          // heads
    ASSERT_EQ(layer["random_blocks"][0].size(), 30u);      // nb - 2 query blocks
    ASSERT_EQ(layer["random_blocks"][0][0].size(), 2u);    // r
    for (const auto& head : layer["random_blocks"])
      for (std::size_t j = 0; j < head.size(); ++j)
        for (const auto& block : head[j]) {
          const std::int64_t q = static_cast<std::int64_t>(j) + 1, k = block.get<std::int64_t>();
          EXPECT_GE(k, 1);
          EXPECT_LE(k, 30);
          EXPECT_GT(std::abs(k - q), 1) << "a random block inside the window";
        }
  }
  EXPECT_NE(a["layers"][0]["random_blocks"], a["layers"][1]["random_blocks"]) << "layers share a table";

  json other = base;
  other["random_seed"] = 1;
  const json c = build("bigbird", t, other, 1)->records();
  EXPECT_NE(a["layers"][0]["random_blocks"], c["layers"][0]["random_blocks"]);
  EXPECT_NE(a["layers"][1]["random_blocks"], c["layers"][1]["random_blocks"]);

  // N <= (5 + 2r) b: dense attention, recorded as such, with an empty table.
  const json dense = build("bigbird", token_task(100), base)->records();
  EXPECT_TRUE(dense["layers"][0]["dense_fallback"].get<bool>());
  EXPECT_TRUE(dense["layers"][0]["random_blocks"].empty());
}

TEST(ModelBigBird, RandomSeedChangesTheOutputOnlyThroughThePattern) {
  // Mean pooling: with one layer, a CLS summary would sit in the global first block, which
  // attends to everything and never uses the random blocks.
  const TaskInfo t = token_task(256);
  const json base = {{"dim", 16}, {"depth", 1}, {"heads", 2}, {"block", 16}, {"random_blocks", 2}, {"dropout", 0.0},
                     {"pooling", "mean"}};
  torch::manual_seed(5);
  const at::Tensor x = at::randint(0, t.vocab_size, {2, 256}, at::kLong);
  at::NoGradGuard no_grad;
  const at::Tensor y0 = build("bigbird", t, base)->forward(x);
  EXPECT_TRUE(at::equal(y0, build("bigbird", t, base)->forward(x)));
  json other = base;
  other["random_seed"] = 7;
  EXPECT_FALSE(at::allclose(y0, build("bigbird", t, other)->forward(x)));  // same weights, other keys
}

// ---- Longformer -----------------------------------------------------------------------

at::Tensor perturbed(const at::Tensor& x, std::int64_t position, std::int64_t vocab) {
  at::Tensor y = x.clone();
  y.select(1, position).add_(1).remainder_(vocab);
  return y;
}

TEST(ModelLongformer, GlobalClsSeesEveryTokenWindowStaysLocal) {
  const std::int64_t N = 512, w = 8;
  const TaskInfo t = token_task(N, 20);
  auto model = build("longformer", t, {{"dim", 16}, {"depth", 1}, {"heads", 2}, {"window", w}, {"dropout", 0.0}});
  torch::manual_seed(9);
  const at::Tensor x = at::randint(0, t.vocab_size, {2, N}, at::kLong);
  at::NoGradGuard no_grad;
  const at::Tensor s0 = longformer_token_states(*model, x);  // [B, 1 + N, D], CLS first
  ASSERT_EQ(s0.sizes(), (std::vector<std::int64_t>{2, N + 1, 16}));

  auto changed = [](const at::Tensor& a, const at::Tensor& b, std::int64_t row) {
    return (a.select(1, row) - b.select(1, row)).abs().max().item<double>() > 1e-6;
  };
  // The last token, N >> w away from CLS, reaches CLS in one layer (global attention)...
  const at::Tensor s1 = longformer_token_states(*model, perturbed(x, N - 1, t.vocab_size));
  EXPECT_TRUE(changed(s0, s1, 0)) << "CLS did not see the last token";
  EXPECT_TRUE(changed(s0, s1, N));
  EXPECT_TRUE(changed(s0, s1, N - w));                 // inside the last token's window
  EXPECT_TRUE(at::equal(s0.select(1, N - w - 1), s1.select(1, N - w - 1)));  // just outside
  EXPECT_TRUE(at::equal(s0.narrow(1, 1, N / 2), s1.narrow(1, 1, N / 2)));

  // ...while a middle token, far from CLS and from both ends, changes only its window.
  const std::int64_t mid = N / 2, row = mid + 1;  // state row of input position mid
  const at::Tensor s2 = longformer_token_states(*model, perturbed(x, mid, t.vocab_size));
  EXPECT_TRUE(changed(s0, s2, 0));
  EXPECT_TRUE(changed(s0, s2, row - w));
  EXPECT_TRUE(changed(s0, s2, row + w));
  EXPECT_TRUE(at::equal(s0.select(1, row - w - 1), s2.select(1, row - w - 1)));
  EXPECT_TRUE(at::equal(s0.select(1, row + w + 1), s2.select(1, row + w + 1)));
  EXPECT_TRUE(at::equal(s0.narrow(1, 1, row - w - 1), s2.narrow(1, 1, row - w - 1)));
  EXPECT_TRUE(at::equal(s0.narrow(1, row + w + 1, N - row - w), s2.narrow(1, row + w + 1, N - row - w)));
}

TEST(ModelLongformer, WindowsPerLayerResolvedAndRecorded) {
  const TaskInfo t = token_task(300);
  const ModelEntry e = entry("longformer");
  EXPECT_EQ(resolved(e, t, {{"depth", 3}, {"window", 32}})["windows"], json({32, 32, 32}));
  const json o = resolved(e, t, {{"depth", 2}, {"windows", {4, 512}}, {"dim", 16}});
  EXPECT_EQ(o["windows"], json({4, 512}));
  torch::manual_seed(0);
  const json r = e.make(o, t)->records();
  EXPECT_EQ(r["tokens"], 301);
  EXPECT_EQ(r["layers"][0]["window"], 4);
  EXPECT_EQ(r["layers"][1]["window"], 512);
  EXPECT_EQ(r["layers"][1]["effective_window"], 300);  // wider than the sequence: all of it
  EXPECT_THROW(resolved(e, t, {{"depth", 3}, {"windows", {4, 8}}}), OptionError);
  EXPECT_THROW(resolved(e, t, {{"dim", 30}, {"heads", 4}}), OptionError);
}

TEST(ModelLongformer, GlobalProjectionsStartAsTheLocalOnes) {
  const TaskInfo t = token_task(64);
  auto model = build("longformer", t, {{"dim", 16}, {"depth", 1}, {"heads", 2}});
  std::map<std::string, at::Tensor> p;
  for (const auto& kv : model->named_parameters()) p[kv.key()] = kv.value();
  EXPECT_TRUE(at::equal(p.at("layer0.q_global.weight"), p.at("layer0.encoder.qkv.weight").narrow(0, 0, 16)));
  EXPECT_TRUE(at::equal(p.at("layer0.kv_global.weight"), p.at("layer0.encoder.qkv.weight").narrow(0, 16, 32)));
  EXPECT_TRUE(at::equal(p.at("layer0.kv_global.bias"), p.at("layer0.encoder.qkv.bias").narrow(0, 16, 32)));
}

// ---- mViT -----------------------------------------------------------------------------

std::vector<json> column(const json& rows, const std::string& key) {
  std::vector<json> out;
  for (const auto& r : rows) out.push_back(r[key]);
  return out;
}

TEST(ModelMvit, StagesFollowThePresetOnGrids) {
  const TaskInfo t = grid_task(3, 64, 64);  // patch 4: a 16 x 16 token grid
  for (const std::string name : {"mvit1", "mvit2"}) {
    auto model = build(name, t, {{"preset", "T"}, {"dim", 8}, {"heads", 1}});
    const json r = model->records();
    EXPECT_EQ(r["version"], name == "mvit1" ? "v1" : "v2");
    const json& s = r["stages"];
    EXPECT_EQ(column(s, "blocks"), (std::vector<json>{1, 2, 5, 2})) << name;
    EXPECT_EQ(column(s, "dim"), (std::vector<json>{8, 16, 32, 64})) << name;
    EXPECT_EQ(column(s, "heads"), (std::vector<json>{1, 2, 4, 8})) << name;
    EXPECT_EQ(column(s, "grid"), (std::vector<json>{{16, 16}, {8, 8}, {4, 4}, {2, 2}})) << name;
    // K/V stride 4, 2, 1, 1: stage 1 pools 16 -> 4; later blocks of stage 2 pool 8 -> 4.
    EXPECT_EQ(column(s, "stride_kv"), (std::vector<json>{4, 2, 1, 1})) << name;
    EXPECT_EQ(column(s, "kv_grid"), (std::vector<json>{{4, 4}, {4, 4}, {4, 4}, {2, 2}})) << name;
    // Where the width changes: v2 inside the strided block, v1 in the block before it.
    const json& b = r["blocks"];
    ASSERT_EQ(b.size(), 10u);
    if (name == "mvit2") {
      EXPECT_EQ(b[1]["dim_in"], 8);
      EXPECT_EQ(b[1]["dim_out"], 16);
      EXPECT_EQ(b[0]["dim_out"], 8);
    } else {
      EXPECT_EQ(b[0]["dim_out"], 16);
      EXPECT_EQ(b[1]["dim_in"], 16);
      EXPECT_EQ(b[1]["attn_dim"], 16);
    }
    EXPECT_EQ(b[1]["stride_q"], 2);
    EXPECT_EQ(b[2]["stride_q"], 1);
    // Q pooled in every block (v2) or only where strided (v1), as the references do.
    EXPECT_EQ(b[1]["kernel_q"], 3);
    EXPECT_EQ(b[2]["kernel_q"], name == "mvit1" ? 1 : 3);
    EXPECT_EQ(b[0]["kernel_q"], name == "mvit1" ? 1 : 3);
    EXPECT_EQ(has_parameter(*model, "block2.attn.pool_q"), name == "mvit2");
    EXPECT_TRUE(has_parameter(*model, "block1.attn.pool_q"));
    EXPECT_TRUE(has_parameter(*model, "block2.attn.pool_k"));
    torch::manual_seed(1);
    at::NoGradGuard no_grad;
    EXPECT_EQ(model->forward(at::randn({2, 3, 64, 64})).sizes(), (std::vector<std::int64_t>{2, 3}));
  }
}

TEST(ModelMvit, StagesPoolAlongOneDimensionalSequences) {
  const TaskInfo t = token_task(256, 16, 0);
  auto model = build("mvit2", t, {{"preset", "tiny"}, {"dim", 8}});
  const json r = model->records();
  EXPECT_EQ(column(r["stages"], "grid"), (std::vector<json>{json::array({256}), json::array({128}), json::array({64}), json::array({32})}));
  // K/V stride 4, 2, 1, 1 on the stages' input grids 256, 256, 128, 64.
  EXPECT_EQ(column(r["stages"], "kv_grid"), (std::vector<json>{json::array({64}), json::array({128}), json::array({128}), json::array({64})}));
  EXPECT_EQ(column(r["stages"], "dim"), (std::vector<json>{8, 16, 32, 64}));
  torch::manual_seed(1);
  at::Tensor x = at::randint(1, 16, {2, 256}, at::kLong);
  x.select(0, 1).narrow(0, 200, 56).fill_(0);  // padding
  at::NoGradGuard no_grad;
  EXPECT_EQ(model->forward(x).sizes(), (std::vector<std::int64_t>{2, 3}));
}

TEST(ModelMvit, PositionsAndHeadFollowTheReference) {
  // v1: learned absolute positions; v2: none (its relative positions carry position), with
  // abs_pos to put them back (the v2 paper's ablation).
  const TaskInfo t = grid_task(3, 32, 32);
  auto v1 = build("mvit1", t, {{"dim", 8}});
  auto v2 = build("mvit2", t, {{"dim", 8}});
  auto v2_abs = build("mvit2", t, {{"dim", 8}, {"abs_pos", true}});
  EXPECT_TRUE(has_parameter(*v1, "stem.pos"));
  EXPECT_FALSE(has_parameter(*v2, "stem.pos"));
  EXPECT_TRUE(has_parameter(*v2_abs, "stem.pos"));
  EXPECT_EQ(parameters(*v2_abs) - parameters(*v2), 8.0 * 8 * 8);  // an 8 x 8 token grid, width 8
  EXPECT_EQ(v1->records()["abs_pos"], true);
  EXPECT_EQ(v2->records()["abs_pos"], false);

  // The head normalises every token, then averages (the reference's order).
  torch::manual_seed(3);
  ClassifierHead head(6, 3, false, true);
  for (auto& p : head->parameters()) {
    at::NoGradGuard no_grad;
    p.normal_();
  }
  const at::Tensor x = at::randn({2, 5, 6}) * at::arange(1, 6).view({1, 5, 1});  // tokens of unequal scale
  const at::Tensor keep = at::tensor({1, 1, 1, 0, 0, 1, 1, 1, 1, 1}, at::kLong).view({2, 5}).gt(0);
  auto params = head->named_parameters();
  auto norm = [&](const at::Tensor& y) {
    return at::layer_norm(y, {6}, params["norm.weight"], params["norm.bias"]);
  };
  auto linear = [&](const at::Tensor& y) { return at::linear(y, params["linear.weight"], params["linear.bias"]); };
  at::NoGradGuard no_grad;
  const at::Tensor got = head->forward(x, keep);
  EXPECT_TRUE(at::allclose(got, linear(masked_mean(norm(x), keep)), 1e-5, 1e-6));
  EXPECT_FALSE(at::allclose(got, linear(norm(masked_mean(x, keep))), 1e-3, 1e-3));
}

TEST(ModelMvit, PaddingActsAsTheEndOfTheSequence) {
  // A sample padded at its end gets the logits of the same sample unpadded: padded keys are
  // masked in every pooling attention, padding is the pooling's border, the strided skip
  // and the mean see real tokens only. Without absolute positions and rel-pos tables (both
  // sized by the grid) the two models have the same weights. 33 real tokens of 64: the
  // sequence stays odd at every pooling (33, 17, 9, 5), so every pooled window of the short
  // sequence has its twin in the padded one.
  const TaskInfo padded_task = token_task(64, 16, 0), short_task = token_task(33, 16, 0);
  torch::manual_seed(8);
  const at::Tensor real = at::randint(1, 16, {2, 33}, at::kLong);
  const at::Tensor padded = at::cat({real, at::zeros({2, 31}, at::kLong)}, 1);
  for (const std::string name : {"mvit1", "mvit2"})
    for (const std::string mode : {"conv", "max", "avg"}) {
      SCOPED_TRACE(name + " " + mode);
      json o = {{"preset", "tiny"}, {"dim", 8}, {"abs_pos", false}, {"pool_mode", mode}};
      if (name == "mvit2") o["rel_pos"] = false;
      at::NoGradGuard no_grad;
      const at::Tensor a = build(name, padded_task, o)->forward(padded);
      const at::Tensor b = build(name, short_task, o)->forward(real);
      EXPECT_TRUE(at::allclose(a, b, 1e-4, 1e-5)) << (a - b).abs().max().item<double>();
    }
}

TEST(ModelMvit, RejectsOptionsThatBreakTheGrid) {
  const TaskInfo t = grid_task(3, 32, 32);
  EXPECT_THROW(resolved(entry("mvit2"), t, {{"q_stride", 3}}), OptionError);
  EXPECT_THROW(resolved(entry("mvit2"), t, {{"pool_kernel", 2}}), OptionError);
  EXPECT_THROW(resolved(entry("mvit1"), t, {{"dim", 10}, {"heads", 4}}), OptionError);
  EXPECT_EQ(resolved(entry("mvit1"), t, {{"preset", "B"}})["depths"], json({2, 3, 16, 3}));
}

TEST(ModelMvit, ImageNetSizesMatchThePublishedOnes) {
  // ImageNet, 224 x 224: MViTv2-T/S/B 4.7/7.0/10.2 G multiply-adds and 24/35/52 M parameters
  // (arXiv 2112.01526, Table 3); MViT-B-16 (v1, depths [1,2,11,2] = preset S) 7.8 G and
  // 37 M (arXiv 2104.11227). FLOPs = 2 x multiply-adds. Building the models is the slow
  // part: parameters are checked for one model per version.
  struct Published {
    std::string model, preset;
    double gmacs, mparams;  // mparams 0: not built here
  };
  const TaskInfo t = grid_task(3, 224, 224, 1000);
  for (const Published& p : std::vector<Published>{
           {"mvit2", "T", 4.7, 24}, {"mvit2", "S", 7.0, 0}, {"mvit2", "B", 10.2, 0}, {"mvit1", "S", 7.8, 37}}) {
    const ModelEntry& e = entry(p.model);
    const json o = resolved(e, t, {{"preset", p.preset}});
    EXPECT_NEAR(e.flops(o, t) / 2e9 / p.gmacs, 1.0, 0.03) << p.model << " " << p.preset;
    if (p.mparams == 0) continue;
    torch::manual_seed(0);
    double params = 0;
    for (const auto& q : e.make(o, t)->parameters()) params += static_cast<double>(q.numel());
    EXPECT_NEAR(params / 1e6 / p.mparams, 1.0, 0.03) << p.model << " " << p.preset;
  }
}

// ---- MAELRE ---------------------------------------------------------------------------

TEST(ModelMaelre, SwitchFiresWhereTokensExceedTheWidth) {
  const TaskInfo t = token_task(64);
  const json r = build("maelre", t, {{"dim", 16}, {"heads", {1, 2, 2, 4}}})->records();
  const json& blocks = r["blocks"];
  ASSERT_EQ(blocks.size(), 4u);
  EXPECT_EQ(column(blocks, "tokens"), (std::vector<json>{64, 16, 4, 1}));
  EXPECT_EQ(column(blocks, "dim"), (std::vector<json>{16, 32, 64, 128}));
  for (const auto& b : blocks)
    EXPECT_EQ(b["attention"], b["tokens"].get<std::int64_t>() > b["dim"].get<std::int64_t>() ? "linear" : "softmax");
  // It flips between blocks 1 and 2 (64 > 16, then 16 <= 32).
  EXPECT_EQ(blocks[0]["attention"], "linear");
  EXPECT_EQ(blocks[1]["attention"], "softmax");

  for (const std::string policy : {"linear", "softmax"}) {
    const json p = build("maelre", t, {{"dim", 16}, {"heads", {1, 2, 2, 4}}, {"attention", policy}})->records();
    for (const auto& b : p["blocks"]) EXPECT_EQ(b["attention"], policy);
  }
}

TEST(ModelMaelre, ReducesAfterEveryBlockLikeThePaper) {
  // Four blocks, four reductions: the head sees N / 4^4 tokens at 16x the first width.
  // "between" keeps the three reductions between blocks; the blocks' N_b and D_b (and so
  // the switch) are the same in both layouts.
  const TaskInfo t = token_task(256);
  const json o = {{"dim", 16}, {"heads", {1, 2, 2, 4}}};
  auto paper = build("maelre", t, o);
  json between_options = o;
  between_options["reductions"] = "between";
  auto between = build("maelre", t, between_options);
  const json a = paper->records(), b = between->records();
  EXPECT_EQ(a["reductions"], 4);
  EXPECT_EQ(b["reductions"], 3);
  EXPECT_EQ(a["blocks"], b["blocks"]);
  EXPECT_EQ(column(a["blocks"], "tokens"), (std::vector<json>{256, 64, 16, 4}));
  EXPECT_EQ(column(a["blocks"], "dim"), (std::vector<json>{16, 32, 64, 128}));
  EXPECT_EQ(column(a["blocks"], "attention"), (std::vector<json>{"linear", "linear", "softmax", "softmax"}));
  EXPECT_EQ(a["head"], json({{"tokens", 1}, {"dim", 256}, {"grid", {1}}}));
  EXPECT_EQ(b["head"], json({{"tokens", 4}, {"dim", 128}, {"grid", {4}}}));
  // The fourth reduction (conv 128 -> 256, kernel 9, with bias) and the wider head
  // (LayerNorm and Linear).
  const double classes = static_cast<double>(t.num_classes);
  EXPECT_EQ(parameters(*paper) - parameters(*between), 128.0 * 256 * 9 + 256 + (256.0 - 128) * (2 + classes));
  EXPECT_TRUE(has_parameter(*paper, "reduce3.conv.weight"));
  EXPECT_FALSE(has_parameter(*between, "reduce3.conv.weight"));
  torch::manual_seed(2);
  const at::Tensor x = at::randint(0, t.vocab_size, {2, 256}, at::kLong);
  at::NoGradGuard no_grad;
  EXPECT_EQ(paper->forward(x).sizes(), (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(resolved(entry("maelre"), t, json::object())["reductions"], "after-each");
}

TEST(ModelMaelre, ShortInputsRunUnderEveryLayoutAndOperator) {
  // A reduction never leaves fewer than one token: a group shorter than nu (or a single
  // token) is zero-padded into one token, as the strided convolution computes it. So short
  // inputs, down to one token, build, run forward and backward, and agree with the plan.
  struct Input {
    TaskInfo task;
    std::vector<std::int64_t> shape;
  };
  std::vector<Input> inputs;
  for (std::int64_t n : {1, 2, 3, 5, 17}) inputs.push_back({token_task(n, 16, 0), {2, n}});
  for (auto hw : std::vector<std::pair<std::int64_t, std::int64_t>>{{1, 1}, {3, 2}, {5, 9}})
    inputs.push_back({grid_task(1, hw.first, hw.second), {2, 1, hw.first, hw.second}});
  for (const auto& in : inputs)
    for (const std::string layout : {"after-each", "between"})
      for (const std::string op : {"conv", "avgpool", "linear-projection", "none"}) {
        SCOPED_TRACE(layout + " " + op + " input " + json(in.shape).dump());
        const json o = {{"dim", 8}, {"heads", {1, 2, 2, 4}}, {"reductions", layout}, {"reduction", op}, {"patch", 1}};
        const ModelEntry e = entry("maelre");
        const json r = resolved(e, in.task, o);
        EXPECT_GT(e.flops(r, in.task), 0);
        torch::manual_seed(4);
        auto model = e.make(r, in.task);
        at::Tensor x = in.task.modality == Modality::Tokens ? at::randint(1, 16, in.shape, at::kLong)
                                                            : at::randn(in.shape);
        if (in.task.modality == Modality::Tokens && in.shape[1] > 1) x[1][in.shape[1] - 1].fill_(0);  // padding
        const at::Tensor logits = model->forward(x);
        ASSERT_EQ(logits.sizes(), (std::vector<std::int64_t>{2, 3}));
        EXPECT_TRUE(logits.isfinite().all().item<bool>());
        logits.sum().backward();
        const std::int64_t tokens = in.task.modality == Modality::Tokens ? in.shape[1] : in.shape[2] * in.shape[3];
        if (op == "none") {
          EXPECT_EQ(model->records()["head"]["tokens"], tokens);
        } else if (layout == "after-each") {
          EXPECT_EQ(model->records()["head"]["tokens"], 1);
        }
      }
}

TEST(ModelMaelre, NoReductionKeepsEveryToken) {
  // The ablation without token merging: N_b = N in every block, the width still doubles
  // (a per-token linear map), so the switch sees N > D_b until D_b reaches N.
  const TaskInfo t = token_task(128, 16, 0);
  auto model = build("maelre", t, {{"dim", 16}, {"heads", {1, 2, 2, 4}}, {"reduction", "none"}});
  const json r = model->records();
  EXPECT_EQ(column(r["blocks"], "tokens"), (std::vector<json>{128, 128, 128, 128}));
  EXPECT_EQ(column(r["blocks"], "dim"), (std::vector<json>{16, 32, 64, 128}));
  EXPECT_EQ(column(r["blocks"], "attention"), (std::vector<json>{"linear", "linear", "linear", "softmax"}));
  EXPECT_EQ(r["head"], json({{"tokens", 128}, {"dim", 256}, {"grid", {128}}}));
  torch::manual_seed(2);
  at::Tensor x = at::randint(1, 16, {2, 128}, at::kLong);
  x[1].narrow(0, 100, 28).fill_(0);  // padding stays masked through the blocks
  at::NoGradGuard no_grad;
  const at::Tensor y = model->forward(x);
  EXPECT_EQ(y.sizes(), (std::vector<std::int64_t>{2, 3}));
  EXPECT_TRUE(y.isfinite().all().item<bool>());
}

TEST(ModelMaelre, TauReadingsAreOptions) {
  const ModelEntry e = entry("maelre");
  const TaskInfo t = token_task(64);
  EXPECT_EQ(resolved(e, t, json::object())["tau_mode"], "row-input");
  EXPECT_EQ(resolved(e, t, {{"tau_mode", "output"}, {"tau", 2.5}})["tau"], 2.5);
  // row has no tau: a fixed tau with it is an error that names both options.
  try {
    resolved(e, t, {{"tau_mode", "row"}, {"tau", 2.0}});
    ADD_FAILURE() << "tau with tau_mode = row was accepted";
  } catch (const OptionError& err) {
    EXPECT_EQ(err.options, (std::vector<std::string>{"tau", "tau_mode"}));
    EXPECT_NE(std::string(err.what()).find("row-input"), std::string::npos) << err.what();
  }
  // The reading reaches the kernel: one linear block, same weights. row-input at tau = 1
  // is row; the default (tau = sqrt(64) = 8) and output differ from it and from each other.
  torch::manual_seed(6);
  const at::Tensor x = at::randint(0, t.vocab_size, {2, 64}, at::kLong);
  auto out = [&](const json& extra) {
    json o = {{"dim", 16}, {"depths", {1}}, {"heads", {2}}, {"attention", "linear"}};
    for (const auto& [k, v] : extra.items()) o[k] = v;
    at::NoGradGuard no_grad;
    return build("maelre", t, o)->forward(x);
  };
  const at::Tensor row = out({{"tau_mode", "row"}});
  // Equal to rounding: bit-equal on LibTorch 1.13 and 2.6, not on 2.11 with 16 threads.
  EXPECT_TRUE(at::allclose(out({{"tau_mode", "row-input"}, {"tau", 1.0}}), row, 1e-6, 1e-7));
  const at::Tensor automatic = out(json::object()), output = out({{"tau_mode", "output"}});
  EXPECT_FALSE(at::allclose(automatic, row));
  EXPECT_FALSE(at::allclose(output, row));
  EXPECT_FALSE(at::allclose(output, automatic));
  EXPECT_TRUE(at::allclose(automatic, out({{"tau", 8.0}}), 1e-6, 1e-7));
}

TEST(ModelMaelre, PoliciesTakeThePathsTheyName) {
  // One block, same weights: "auto" must compute exactly what the policy it picks computes,
  // and "linear" and "softmax" must differ.
  torch::manual_seed(4);
  for (std::int64_t n : {64, 8}) {  // N > D = 16: linear; N <= D: softmax
    const TaskInfo t = token_task(n);
    const at::Tensor x = at::randint(0, t.vocab_size, {2, n}, at::kLong);
    const json base = {{"dim", 16}, {"depths", {1}}, {"heads", {2}}, {"attention", "auto"}};
    at::NoGradGuard no_grad;
    auto out = [&](const std::string& policy) {
      json o = base;
      o["attention"] = policy;
      return build("maelre", t, o)->forward(x);
    };
    const at::Tensor a = out("auto"), lin = out("linear"), soft = out("softmax");
    EXPECT_FALSE(at::allclose(lin, soft));
    EXPECT_TRUE(at::equal(a, n > 16 ? lin : soft)) << "N = " << n;
    EXPECT_FALSE(at::allclose(a, n > 16 ? soft : lin)) << "N = " << n;
  }
}

}  // namespace
}  // namespace lrb
