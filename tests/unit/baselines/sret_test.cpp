// SReT (baselines/sret/sret.cpp): its layout, and MergeOver's merging as inference
// settings on fixed weights.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <torch/utils.h>

#include "suite/registry/registry.h"
#include "suite/contracts/model.h"

namespace lrb {
namespace {

TaskInfo grid_task(std::int64_t side, std::int64_t channels = 1) {
  TaskInfo t;
  t.modality = Modality::Grid;
  t.input_shape = {channels, side, side};
  t.num_classes = 5;
  t.metrics = {"accuracy"};
  return t;
}

json options(const TaskInfo& t, json overrides) {
  const ModelEntry& e = *ModelRegistry::instance().find("sret");
  json o = json::object();
  for (const auto& s : e.schema.options) o[s.name] = s.default_value;
  for (const auto& [k, v] : overrides.items()) o[k] = v;
  e.schema.resolve(o, t.to_json());
  return o;
}

std::shared_ptr<Model> make(const TaskInfo& t, const json& o) {
  torch::manual_seed(4);
  auto m = ModelRegistry::instance().find("sret")->make(o, t);
  m->eval();
  return m;
}

TEST(Sret, SretTStageLengthsAndThePapersMergeCounts) {
  // SReT-T's layout on 224x224 (three stem convs: 28x28), at a small width so it builds fast.
  const TaskInfo t = grid_task(224, 3);
  const json o = options(t, {{"preset", "T"}, {"widths", {8, 16, 32}}, {"heads", {1, 2, 4}}});
  auto m = make(t, o);
  m->set_inference({{"merge", true}, {"schedule", "stage"}, {"rho", 0.25}, {"r", 0}, {"unmerge", "duplicate"}, {"proportional", true}});
  const json stages = m->records().at("stages");
  ASSERT_EQ(stages.size(), 3u);
  EXPECT_EQ(stages[0]["tokens"], 784);
  EXPECT_EQ(stages[1]["tokens"], 196);
  EXPECT_EQ(stages[2]["tokens"], 49);
  EXPECT_EQ(stages[0]["tokens_after_merging"], 584);
  EXPECT_EQ(stages[1]["tokens_after_merging"], 144);
  EXPECT_EQ(stages[2]["tokens_after_merging"], 37);
  // One merge, at the stage's first block application: 4, 10 and 6 applications.
  EXPECT_EQ(stages[0]["merge_r"], json({200, 0, 0, 0}));
  EXPECT_EQ(stages[1]["merge_r"].size(), 10u);
  EXPECT_EQ(stages[0]["groups"], json({8, 2}));
}

TEST(Sret, MergingOffOrAtRateZeroIsTheModelAsTrained) {
  const TaskInfo t = grid_task(28);
  auto m = make(t, options(t, json::object()));
  torch::manual_seed(1);
  const at::Tensor x = at::rand({3, 1, 28, 28});
  at::NoGradGuard ng;
  const at::Tensor base = m->forward(x);
  EXPECT_TRUE(at::equal(m->forward(x), base)) << "evaluation is deterministic (the recursive permutation is seeded)";
  m->set_inference({{"merge", true}, {"schedule", "stage"}, {"rho", 0.0}, {"r", 0}, {"unmerge", "zero"}, {"proportional", true}});
  EXPECT_TRUE(at::equal(m->forward(x), base));
  m->set_inference({{"merge", true}, {"schedule", "stage"}, {"rho", 0.25}, {"r", 0}, {"unmerge", "duplicate"}, {"proportional", true}});
  const at::Tensor merged = m->forward(x);
  EXPECT_FALSE(at::equal(merged, base));
  EXPECT_EQ(merged.sizes(), base.sizes());
  m->set_inference(json::object());
  EXPECT_TRUE(at::equal(m->forward(x), base));
}

TEST(Sret, UnmergeModesShapeThePoolingInput) {
  const TaskInfo t = grid_task(28);
  auto m = make(t, options(t, json::object()));  // tiny: 14x14 -> 7x7 -> 4x4, groups1 [4,1,1]
  torch::manual_seed(2);
  const at::Tensor x = at::rand({2, 1, 28, 28});
  at::NoGradGuard ng;
  m->set_probing(true);
  auto pool1 = [&](const std::string& mode) {
    m->set_inference({{"merge", true}, {"schedule", "stage"}, {"rho", 0.25}, {"r", 0}, {"unmerge", mode}, {"proportional", true}});
    m->forward(x);
    const auto probes = m->probes();
    EXPECT_EQ(probes.size(), 3u);
    EXPECT_EQ(probes[0].first, "pool1");
    EXPECT_EQ(probes[2].first, "head");
    return probes[0].second;  // [B, 196, 32]
  };
  const at::Tensor dup = pool1("duplicate"), zero = pool1("zero"), near = pool1("neighbour-mean"), exact = pool1("exact");
  ASSERT_EQ(dup.sizes(), (std::vector<std::int64_t>{2, 196, 32}));
  // 196 -> 144 tokens: duplicate repeats 144 distinct vectors over the grid; zero leaves 52 zero rows.
  for (std::int64_t b = 0; b < 2; ++b) {
    EXPECT_EQ(std::get<0>(at::unique_dim(dup[b], 0)).size(0), 144);
    EXPECT_EQ(zero[b].abs().sum(-1).eq(0).sum().item<std::int64_t>(), 52);
    EXPECT_EQ(near[b].abs().sum(-1).eq(0).sum().item<std::int64_t>(), 0);
    EXPECT_GT(std::get<0>(at::unique_dim(exact[b], 0)).size(0), 144);  // absorbed tokens keep their own part
  }
  // Where nothing was vacated, the four modes agree.
  const at::Tensor kept = zero.abs().sum(-1).ne(0).unsqueeze(-1).expand_as(zero);
  EXPECT_TRUE(at::equal(dup.masked_select(kept), zero.masked_select(kept)));
  EXPECT_TRUE(at::equal(near.masked_select(kept), zero.masked_select(kept)));
}

TEST(Sret, LayerScheduleMergesAtEveryApplicationWithinTheRule) {
  const TaskInfo t = grid_task(28);
  auto m = make(t, options(t, json::object()));
  m->set_inference({{"merge", true}, {"schedule", "layer"}, {"rho", 0.0}, {"r", 10}, {"unmerge", "duplicate"}, {"proportional", true}});
  const json stages = m->records().at("stages");
  // Stage 1: 196 tokens, g = lcm(4, 2) = 4: r = 10 -> 12 (184), then 12 again (172).
  EXPECT_EQ(stages[0]["merge_r"], json({12, 12}));
  EXPECT_EQ(stages[0]["tokens_after_merging"], 172);
  // Stage 3: 16 tokens, g = 1: 8 (the limit), then 4 of the 8 left.
  EXPECT_EQ(stages[2]["merge_r"], json({8, 4}));
  torch::manual_seed(3);
  at::NoGradGuard ng;
  EXPECT_EQ(m->forward(at::rand({2, 1, 28, 28})).sizes(), (std::vector<std::int64_t>{2, 5}));
}

TEST(Sret, OptionsAreCheckedAgainstTheGrid) {
  const ModelEntry& e = *ModelRegistry::instance().find("sret");
  const TaskInfo t = grid_task(28);
  json o = json::object();
  for (const auto& s : e.schema.options) o[s.name] = s.default_value;
  o["groups1"] = {3, 1, 1};  // 196 tokens are not a multiple of lcm(3, 2) = 6
  try {
    e.schema.resolve(o, t.to_json());
    FAIL();
  } catch (const OptionError& err) {
    EXPECT_NE(std::string(err.what()).find("stage 1 has 196 tokens, not divisible into groups of lcm(groups1, groups2) = 6"),
              std::string::npos)
        << err.what();
  }
  json inf = json::object();
  for (const auto& s : e.inference.options) inf[s.name] = s.default_value;
  inf["schedule"] = "layer";
  EXPECT_THROW(e.inference.resolve(inf, json::object()), OptionError);  // the layer schedule needs r
}

}  // namespace
}  // namespace lrb
