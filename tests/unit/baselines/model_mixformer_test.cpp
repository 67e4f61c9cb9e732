// MixFormer: the router's weights sum to one, every expert receives gradient, the model's
// TALA forms give the same logits where the kernel's forms agree, the pairwise bias refuses
// forms without a fixed-size state, the form check measures what it claims, and the
// records and FLOPs follow the options.
#include <gtest/gtest.h>

#include <cmath>

#include <ATen/ATen.h>
#include <torch/utils.h>

#include <string>

#include "suite/contracts/options.h"
#include "suite/registry/registry.h"
#include "suite/contracts/model.h"

namespace lrb {
namespace {

const ModelEntry& mixformer() {
  const ModelEntry* e = ModelRegistry::instance().find("mixformer");
  EXPECT_NE(e, nullptr);
  return *e;
}

TaskInfo token_task(std::int64_t n) {
  TaskInfo t;
  t.modality = Modality::Tokens;
  t.input_shape = {n};
  t.vocab_size = 20;
  t.pad_token = 0;
  t.num_classes = 5;
  t.metrics = {"accuracy"};
  return t;
}

json resolved(const TaskInfo& t, const json& overrides) {
  json o = json::object();
  for (const auto& spec : mixformer().schema.options) o[spec.name] = spec.default_value;
  for (const auto& [k, v] : overrides.items()) o[k] = v;
  mixformer().schema.resolve(o, t.to_json());
  return o;
}

std::shared_ptr<Model> build(const TaskInfo& t, const json& overrides, std::uint64_t seed = 5) {
  torch::manual_seed(seed);
  return mixformer().make(resolved(t, overrides), t);
}

at::Tensor tokens(std::int64_t batch, std::int64_t n) {
  at::Tensor x = at::randint(2, 20, {batch, n}, at::kLong);
  x.slice(0, 0, batch, 2).slice(1, n - 5) = 0;  // padding at the end of every other sample
  return x;
}

const json kSmall = {{"dim", 32}, {"heads", 2}, {"depth", 2}, {"dropout", 0.0}, {"window", 4}, {"bias_init_std", 0.5}};

json with(json base, const json& more) {
  for (const auto& [k, v] : more.items()) base[k] = v;
  return base;
}

TEST(ModelMixformer, RouterWeightsSumToOne) {
  const TaskInfo t = token_task(40);
  torch::manual_seed(1);
  const at::Tensor x = tokens(6, 40);
  for (const std::int64_t top_k : {0, 2, 3}) {
    auto m = build(t, with(kSmall, {{"experts", 4}, {"top_k", top_k}}));
    m->eval();
    at::NoGradGuard ng;
    m->forward(x);
    const json load = m->records().at("router_load");
    ASSERT_EQ(load.size(), 2u);
    for (const auto& layer : load) {
      ASSERT_EQ(layer.size(), 4u);
      double sum = 0;
      for (const auto& w : layer) {
        EXPECT_GE(w.get<double>(), 0.0);
        sum += w.get<double>();
      }
      // The mean over tokens of weights that sum to one per token.
      EXPECT_NEAR(sum, 1.0, 1e-6) << "top_k " << top_k;  // float32 weights
    }
  }
}

TEST(ModelMixformer, RouterLoadCountsTheLastEvaluationOnly) {
  const TaskInfo t = token_task(24);
  auto m = build(t, with(kSmall, {{"experts", 3}}));
  torch::manual_seed(2);
  const at::Tensor a = tokens(4, 24), b = tokens(4, 24);
  at::NoGradGuard ng;
  m->eval();
  m->forward(a);
  const json only_a = m->records().at("router_load");
  m->forward(b);
  const json a_and_b = m->records().at("router_load");
  EXPECT_NE(only_a, a_and_b);
  m->train();
  m->forward(b);
  m->eval();
  m->forward(a);
  EXPECT_EQ(m->records().at("router_load"), only_a);
}

TEST(ModelMixformer, EveryExpertReceivesGradient) {
  const TaskInfo t = token_task(32);
  for (const std::string bias : {"relative", "pairwise"})
    for (const std::int64_t top_k : {0, 2}) {
      const std::int64_t E = 4, H = 2;
      auto m = build(t, with(kSmall, {{"experts", E}, {"top_k", top_k}, {"bias", bias}, {"form", "parallel"}}));
      torch::manual_seed(3);
      at::cross_entropy_loss(m->forward(tokens(16, 32)), at::randint(0, 5, {16}, at::kLong)).backward();
      for (const auto& p : m->named_parameters()) {
        const std::string name = p.key();
        if (name.find("router") == std::string::npos && name.find("log_bias") == std::string::npos) continue;
        const at::Tensor g = p.value().grad();
        ASSERT_TRUE(g.defined()) << name;
        // Router weight rows and bias blocks are expert-major: E blocks of rows.
        const at::Tensor per_expert = g.reshape({E, -1}).abs().sum(1);
        for (std::int64_t e = 0; e < E; ++e)
          EXPECT_GT(per_expert[e].item<double>(), 0) << bias << " top_k " << top_k << ": no gradient for expert " << e
                                                     << " in " << name;
      }
      (void)H;
    }
}

TEST(ModelMixformer, FormsGiveTheSameLogitsWhereTheKernelFormsAgree) {
  const TaskInfo t = token_task(50);
  torch::manual_seed(4);
  const at::Tensor x = tokens(4, 50);
  for (const std::string bias : {"none", "relative"})
    for (const bool normalise : {false, true}) {
      std::vector<at::Tensor> logits;
      for (const std::string form : {"parallel", "recurrent", "chunkwise"}) {
        auto m = build(t, with(kSmall, {{"experts", 3}, {"bias", bias}, {"normalise", normalise}, {"form", form},
                                        {"chunk", 16}}));
        m->eval();
        at::NoGradGuard ng;
        logits.push_back(m->forward(x));
      }
      for (std::size_t i = 1; i < logits.size(); ++i)
        EXPECT_LT((logits[i] - logits[0]).abs().max().item<double>(), 1e-4)
            << bias << " normalise " << normalise << " form " << i;
    }
}

TEST(ModelMixformer, PairwiseBiasRefusesFormsWithoutAFixedState) {
  const TaskInfo t = token_task(16);
  for (const json& bad : {json{{"bias", "pairwise"}, {"form", "recurrent"}}, json{{"bias", "pairwise"}, {"form", "chunkwise"}},
                          json{{"bias", "pairwise"}, {"form", "parallel"}, {"check_form", "recurrent"}}}) {
    try {
      resolved(t, bad);
      ADD_FAILURE() << bad.dump() << " was accepted";
    } catch (const OptionError& e) {
      EXPECT_NE(std::string(e.what()).find("not a fixed d x d state"), std::string::npos) << e.what();
    }
  }
  EXPECT_NO_THROW(resolved(t, {{"bias", "pairwise"}, {"form", "parallel"}, {"check_form", "eq15"}}));
  EXPECT_THROW(resolved(t, {{"top_k", 1}}), OptionError);
  EXPECT_THROW(resolved(t, {{"experts", 2}, {"top_k", 3}}), OptionError);
  EXPECT_THROW(resolved(token_task(8192), {{"bias", "pairwise"}, {"form", "parallel"}}), OptionError);
}

TEST(ModelMixformer, FormCheckMeasuresTheGapItNames) {
  const TaskInfo t = token_task(30);
  torch::manual_seed(6);
  const at::Tensor x = tokens(4, 30);
  auto gap = [&](const json& options) {
    auto m = build(t, with(kSmall, with(options, {{"experts", 2}, {"bias_init_std", 1.0}})));
    m->train();
    m->reset_figures();
    m->forward(x);
    const auto f = m->figures();
    EXPECT_EQ(f.count("form_gap"), 1u);
    return f.count("form_gap") ? f.at("form_gap") : -1.0;
  };
  EXPECT_LT(gap({{"bias", "relative"}, {"check_form", "parallel"}}), 1e-5);   // float32 rounding
  EXPECT_LT(gap({{"bias", "relative"}, {"check_form", "recurrent"}}), 1e-5);  // the windowed recurrence
  EXPECT_LT(gap({{"bias", "none"}, {"normalise", true}, {"check_form", "chunkwise"}}), 1e-5);
  EXPECT_GT(gap({{"bias", "relative"}, {"check_form", "eq15"}}), 1e-2);        // Eq. 15 as printed
  EXPECT_GT(gap({{"bias", "pairwise"}, {"form", "parallel"}, {"check_form", "eq15"}}), 1e-2);
  EXPECT_GT(gap({{"bias", "none"}, {"normalise", true}, {"check_form", "eq15"}}), 1e-2);  // normaliser dropped
  auto plain = build(t, kSmall);
  EXPECT_TRUE(plain->figures().empty());
}

// Eq. 15 as printed overflows float32 on long inputs with a wide bias (G = exp(N(0, 16))):
// its gap is NaN there, which a running maximum drops; it must read as a large gap, never 0.
TEST(ModelMixformer, AFormThatOverflowsRecordsAGapNotAgreement) {
  const TaskInfo t = token_task(64);
  torch::manual_seed(7);
  const at::Tensor x = tokens(4, 64);
  auto m = build(t, with(kSmall, {{"bias", "relative"}, {"check_form", "eq15"}, {"bias_init_std", 4.0}}));
  m->train();
  m->reset_figures();
  m->forward(x);
  const double gap = m->figures().at("form_gap");
  EXPECT_TRUE(std::isfinite(gap)) << gap;
  EXPECT_GT(gap, 1e20) << "an overflow is a gap of at least float32's largest value over the scale";
}

TEST(ModelMixformer, RecordsDecaysPerExpertAndFlopsFollowTheForm) {
  const TaskInfo t = token_task(64);
  auto m = build(t, with(kSmall, {{"experts", 2}}));
  const json r = m->records();
  ASSERT_EQ(r.at("decays").size(), 2u);
  // Expert-major over [5, 12]: expert 0 starts at 1 - 2^-5, the last expert ends at 1 - 2^-12.
  EXPECT_NEAR(r.at("decays")[0][0].get<double>(), 1 - std::pow(2.0, -5), 1e-12);
  EXPECT_NEAR(r.at("decays")[1][1].get<double>(), 1 - std::pow(2.0, -12), 1e-12);
  EXPECT_LT(r.at("decays")[0][1].get<double>(), r.at("decays")[1][0].get<double>());
  EXPECT_EQ(r.at("reading").at("bias"), "relative");

  auto flops = [&](std::int64_t n, const json& options) {
    const TaskInfo tn = token_task(n);
    return mixformer().flops(resolved(tn, with(kSmall, options)), tn);
  };
  // Chunkwise grows linearly in N, parallel quadratically; experts multiply the attention.
  const double c1 = flops(1024, {{"experts", 1}}), c2 = flops(2048, {{"experts", 1}});
  EXPECT_NEAR(c2 / c1, 2.0, 0.05);
  const double p1 = flops(1024, {{"experts", 1}, {"form", "parallel"}}), p2 = flops(2048, {{"experts", 1}, {"form", "parallel"}});
  EXPECT_GT(p2 / p1, 3.0);
  EXPECT_GT(flops(1024, {{"experts", 4}}), flops(1024, {{"experts", 1}}));
}

}  // namespace
}  // namespace lrb
