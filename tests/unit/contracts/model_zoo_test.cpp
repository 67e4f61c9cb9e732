// Every registered model on every input kind it takes: output shape, backward, a short
// training run that overfits 32 samples, determinism. New models are covered by
// registering them (with small_options for a cheap instance).
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <torch/optim/adamw.h>
#include <torch/utils.h>

#include "suite/registry/registry.h"
#include "suite/contracts/model.h"
#include "suite/runtime/precision.h"

namespace lrb {
namespace {

TaskInfo task_for(Modality m) {
  TaskInfo t;
  t.modality = m;
  t.num_classes = 4;
  t.metrics = {"accuracy"};
  switch (m) {
    case Modality::Tokens:
      t.input_shape = {64};
      t.vocab_size = 12;
      t.pad_token = 0;
      break;
    case Modality::Signal: t.input_shape = {128, 2}; break;
    case Modality::Grid: t.input_shape = {1, 16, 16}; break;
  }
  return t;
}

at::Tensor inputs_for(const TaskInfo& t, std::int64_t n) {
  switch (t.modality) {
    case Modality::Tokens: {
      auto x = at::randint(1, t.vocab_size, {n, t.input_shape[0]}, at::kLong);
      // Padding at the end of every other sample: models must mask it.
      x.slice(0, 0, n, 2).slice(1, t.input_shape[0] - 9) = 0;
      return x;
    }
    case Modality::Signal: return at::randn({n, t.input_shape[0], t.input_shape[1]});
    case Modality::Grid: return at::randn({n, t.input_shape[0], t.input_shape[1], t.input_shape[2]});
  }
  return {};
}

json resolved(const ModelEntry& e, const TaskInfo& t, json overrides = json::object()) {
  json o = json::object();
  for (const auto& spec : e.schema.options) o[spec.name] = spec.default_value;
  for (const auto& [k, v] : e.small_options.items()) o[k] = v;
  for (const auto& [k, v] : overrides.items()) o[k] = v;
  if (e.schema.resolve) e.schema.resolve(o, t.to_json());
  return o;
}

bool needs_user_input(const ModelEntry& e) {
  for (const auto& o : e.schema.options)
    if (o.default_value.is_null() && !o.derived) return true;
  return false;
}

struct Case {
  std::string model;
  Modality modality;
};

std::vector<Case> all_cases() {
  std::vector<Case> out;
  for (const auto& [name, e] : ModelRegistry::instance().entries()) {
    if (!e.make) continue;  // test-only entries without a model
    // A model that needs the user's input to exist (torchscript: the module's file) has a
    // suite of its own that covers these checks on real files (TorchScriptModel.*).
    if (needs_user_input(e)) continue;
    for (auto m : e.modalities) out.push_back({name, m});
  }
  return out;
}

class ModelZoo : public ::testing::TestWithParam<Case> {};

TEST_P(ModelZoo, ShapesBackwardOverfitAndDeterminism) {
  const Case& c = GetParam();
  const ModelEntry& e = *ModelRegistry::instance().find(c.model);
  const TaskInfo t = task_for(c.modality);
  const json o = resolved(e, t);
  torch::manual_seed(1);
  const at::Tensor x = inputs_for(t, 32);
  const at::Tensor y = at::randint(0, t.num_classes, {32}, at::kLong);

  auto train = [&](int steps) {
    torch::manual_seed(7);
    auto model = e.make(o, t);
    // 2e-3: every model memorises within 150 steps. At 3e-3 MAELRE's paper layout (a
    // reduction right before the head) stalls near chance on the 2-D inputs for some
    // initialisations, though it memorises at 1e-3 and 2e-3, or at 3e-3 given 300 steps.
    torch::optim::AdamW opt(model->parameters(), torch::optim::AdamWOptions(2e-3).weight_decay(0));
    model->train();
    for (int i = 0; i < steps; ++i) {
      opt.zero_grad();
      auto logits = model->forward(x);
      EXPECT_EQ(logits.sizes(), (std::vector<std::int64_t>{32, t.num_classes}));
      at::cross_entropy_loss(logits, y).backward();
      opt.step();
    }
    model->eval();
    at::NoGradGuard ng;
    return model->forward(x);
  };

  // Backward reaches every parameter.
  {
    torch::manual_seed(7);
    auto model = e.make(o, t);
    at::cross_entropy_loss(model->forward(x), y).backward();
    for (const auto& p : model->named_parameters())
      EXPECT_TRUE(p.value().grad().defined()) << c.model << ": no gradient for " << p.key();
    EXPECT_GT(e.flops(o, t), 0);
  }
  const at::Tensor logits = train(150);
  const double acc = logits.argmax(1).eq(y).to(at::kDouble).mean().item<double>();
  EXPECT_GE(acc, 0.9) << c.model << " on " << modality_name(c.modality) << " did not overfit 32 samples";
  EXPECT_TRUE(at::equal(train(3), train(3))) << "not deterministic";
}

// [train] precision = "bf16": the forward under bf16 autocast (emulated by LibTorch where the
// CPU lacks bf16 instructions: the same rounding, slower), backward and the update in fp32.
// On every input kind a model takes, its products run in bf16 (its logits are bf16) and every
// gradient reaches its fp32 parameter, finite; on its first input kind (emulation is slow)
// it must still memorise 32 samples.
TEST_P(ModelZoo, TrainsUnderBf16AutocastWithFp32WeightsAndGradients) {
  const Case& c = GetParam();
  const ModelEntry& e = *ModelRegistry::instance().find(c.model);
  const TaskInfo t = task_for(c.modality);
  const json o = resolved(e, t);
  const at::Device cpu(at::kCPU);
  torch::manual_seed(1);
  const at::Tensor x = inputs_for(t, 32);
  const at::Tensor y = at::randint(0, t.num_classes, {32}, at::kLong);
  torch::manual_seed(7);
  auto model = e.make(o, t);
  torch::optim::AdamW opt(model->parameters(), torch::optim::AdamWOptions(2e-3).weight_decay(0));
  model->train();
  const int steps = c.modality == e.modalities.front() ? 150 : 1;
  for (int i = 0; i < steps; ++i) {
    opt.zero_grad();
    at::Tensor logits;
    {
      const AutocastScope autocast("bf16", cpu);
      logits = model->forward(x);
    }
    if (i == 0) {
      ASSERT_EQ(logits.scalar_type(), at::kBFloat16) << c.model << ": the forward did not run in bf16";
    }
    at::cross_entropy_loss(logits.to(at::kFloat), y).backward();
    if (i == 0)
      for (const auto& p : model->named_parameters()) {
        EXPECT_EQ(p.value().scalar_type(), at::kFloat) << p.key();
        ASSERT_TRUE(p.value().grad().defined()) << c.model << ": no gradient for " << p.key();
        EXPECT_EQ(p.value().grad().scalar_type(), at::kFloat) << p.key();
        EXPECT_TRUE(p.value().grad().isfinite().all().item<bool>()) << c.model << ": gradient of " << p.key() << " not finite";
      }
    opt.step();
  }
  if (steps == 1) return;
  model->eval();
  at::NoGradGuard ng;
  const AutocastScope autocast("bf16", cpu);
  const double acc = model->forward(x).argmax(1).eq(y).to(at::kDouble).mean().item<double>();
  EXPECT_GE(acc, 0.9) << c.model << " on " << modality_name(c.modality) << " did not overfit 32 samples under bf16";
}

INSTANTIATE_TEST_SUITE_P(Registered, ModelZoo, ::testing::ValuesIn(all_cases()), [](const auto& info) {
  std::string n = info.param.model + "_" + modality_name(info.param.modality);
  for (auto& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
});

}  // namespace
}  // namespace lrb
