#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <torch/types.h>  // clip_grad.h uses torch::Tensor without including it
#include <torch/nn/utils/clip_grad.h>
#include <torch/serialize.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "suite/core/simd_level.h"
#include "suite/nn/cpu/fused_adamw.h"

namespace lrb {
namespace {

using torch::optim::AdamW;
using torch::optim::AdamWOptions;
using torch::optim::OptimizerParamGroup;

// Two parameter groups as make_optimizer builds them (matrices decayed, the rest not).
std::vector<at::Tensor> make_params(at::ScalarType type = at::kFloat) {
  at::manual_seed(3);
  return {at::randn({7, 5}, type).set_requires_grad(true), at::randn({5}, type).set_requires_grad(true),
          at::randn({3, 4, 2}, type).set_requires_grad(true)};
}

template <typename Optimizer>
std::unique_ptr<torch::optim::Optimizer> make(const std::vector<at::Tensor>& p, bool amsgrad = false) {
  std::vector<OptimizerParamGroup> groups;
  const auto o = AdamWOptions(3e-2).betas({0.9, 0.99}).eps(1e-6).amsgrad(amsgrad);
  groups.emplace_back(std::vector<at::Tensor>{p[0], p[2]}, std::make_unique<AdamWOptions>(AdamWOptions(o).weight_decay(0.05)));
  groups.emplace_back(std::vector<at::Tensor>{p[1]}, std::make_unique<AdamWOptions>(AdamWOptions(o).weight_decay(0.0)));
  return std::make_unique<Optimizer>(std::move(groups), o);
}

// The same gradient sequence for both optimizers: a fixed quadratic's gradient at the
// current parameters, with one parameter left without a gradient on odd steps.
void gradients_at_step(const std::vector<at::Tensor>& p, int s) {
  at::Tensor loss = at::zeros({}, p[0].options().requires_grad(false));
  for (std::size_t i = 0; i < p.size(); ++i)
    if (!(i == 1 && s % 2 == 1)) loss = loss + (p[i] * p[i]).sum() * (0.5 + static_cast<double>(i)) + p[i].sum().sin();
  loss.backward();
}

// clip > 0: the global gradient norm clipped to it, as the harness steps (clip_and_step).
void steps(torch::optim::Optimizer& opt, const std::vector<at::Tensor>& p, int from, int to, double clip = 0) {
  for (int s = from; s < to; ++s) {
    opt.zero_grad();
    gradients_at_step(p, s);
    if (clip > 0) clip_and_step(opt, p, clip);
    else opt.step();
  }
}

// LibTorch's two calls, as the harness made them before clip_and_step.
void clipped_steps_by_libtorch(torch::optim::Optimizer& opt, const std::vector<at::Tensor>& p, int from, int to,
                               double clip) {
  for (int s = from; s < to; ++s) {
    opt.zero_grad();
    gradients_at_step(p, s);
    torch::nn::utils::clip_grad_norm_(p, clip);
    opt.step();
  }
}

double max_rel(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    worst = std::max(worst, ((a[i] - b[i]).abs().max() / b[i].abs().max()).item<double>());
  return worst;
}

TEST(FusedAdamW, FollowsLibTorchsAdamWStepForStep) {
  const auto fused_p = make_params(), ref_p = make_params();
  auto fused = make<FusedAdamW>(fused_p);
  auto ref = make<AdamW>(ref_p);
  for (int k = 0; k < 4; ++k) {
    steps(*fused, fused_p, 10 * k, 10 * (k + 1));
    steps(*ref, ref_p, 10 * k, 10 * (k + 1));
    EXPECT_LT(max_rel(fused_p, ref_p), 1e-5) << "after " << 10 * (k + 1) << " steps";
  }
  EXPECT_GT(max_rel(fused_p, make_params()), 0.1);  // they moved
}

// The clipping coefficient applied inside the update is clip_grad_norm_'s: the gradients'
// norms here are 3-10, so a clip of 2 scales every step and one of 100 none.
TEST(FusedAdamW, ClipsTheGradientsAsClipGradNormThenStep) {
  for (const double clip : {2.0, 100.0}) {
    const auto fused_p = make_params(), ref_p = make_params();
    auto fused = make<FusedAdamW>(fused_p);
    auto ref = make<AdamW>(ref_p);
    steps(*fused, fused_p, 0, 30, clip);
    clipped_steps_by_libtorch(*ref, ref_p, 0, 30, clip);
    EXPECT_LT(max_rel(fused_p, ref_p), 1e-5) << "clip " << clip;
    // Against clip_grad_norm_ then the fused step: the same bits.
    const auto two_pass_p = make_params();
    auto two_pass = make<FusedAdamW>(two_pass_p);
    clipped_steps_by_libtorch(*two_pass, two_pass_p, 0, 30, clip);
    for (std::size_t i = 0; i < fused_p.size(); ++i) EXPECT_TRUE(fused_p[i].equal(two_pass_p[i])) << i;
    const auto unclipped_p = make_params();
    auto unclipped = make<AdamW>(unclipped_p);
    steps(*unclipped, unclipped_p, 0, 30);
    if (clip < 10) EXPECT_GT(max_rel(fused_p, unclipped_p), 1e-3) << "clipping changed nothing";
    else EXPECT_LT(max_rel(fused_p, unclipped_p), 1e-5);
  }
}

// `to` continues where `from` stands: its parameters copied, its state saved and loaded as a
// checkpoint carries it.
void continue_in(const torch::optim::Optimizer& from, const std::vector<at::Tensor>& from_p,
                 torch::optim::Optimizer& to, const std::vector<at::Tensor>& to_p) {
  std::stringstream buffer;
  torch::serialize::OutputArchive out;
  from.save(out);
  out.save_to(buffer);
  for (std::size_t i = 0; i < to_p.size(); ++i) {
    at::NoGradGuard g;
    to_p[i].copy_(from_p[i]);
    to_p[i].mutable_grad() = at::zeros_like(to_p[i]);  // as zero_grad leaves from_p's (1.13)
  }
  torch::serialize::InputArchive in;
  in.load_from(buffer);
  to.load(in);
}

// The element loop's AVX2 copy does each element's IEEE operations in the baseline copy's
// order (no FMA), so twenty clipped steps give the same bits (35 entries: vectors and a tail).
TEST(FusedAdamW, ItsAvx2LoopGivesTheBaselineLoopsBits) {
  if (cpu_simd_level() < SimdLevel::avx2) GTEST_SKIP() << "no AVX2 here: both are the baseline loop";
  const auto baseline_p = make_params(), avx2_p = make_params();
  auto baseline = make<FusedAdamW>(baseline_p);
  auto avx2 = make<FusedAdamW>(avx2_p);
  {
    const ScopedSimdLevel at(SimdLevel::baseline);
    steps(*baseline, baseline_p, 0, 20, /*clip=*/1.0);
  }
  {
    const ScopedSimdLevel at(SimdLevel::avx2);
    steps(*avx2, avx2_p, 0, 20, /*clip=*/1.0);
  }
  for (std::size_t i = 0; i < baseline_p.size(); ++i) EXPECT_TRUE(at::equal(baseline_p[i], avx2_p[i])) << "parameter " << i;
}

TEST(FusedAdamW, ItsStateLoadsIntoAdamWAndBack) {
  // A checkpoint written by one continues in the other (runs resumed across versions).
  const auto a_p = make_params(), b_p = make_params(), c_p = make_params();
  auto a = make<FusedAdamW>(a_p);
  auto b = make<AdamW>(b_p);
  auto c = make<FusedAdamW>(c_p);
  steps(*a, a_p, 0, 7);
  continue_in(*a, a_p, *b, b_p);
  steps(*a, a_p, 7, 12);
  steps(*b, b_p, 7, 12);
  EXPECT_LT(max_rel(a_p, b_p), 1e-5);
  continue_in(*b, b_p, *c, c_p);  // ... and AdamW's state into the fused one
  steps(*b, b_p, 12, 20);
  steps(*c, c_p, 12, 20);
  EXPECT_LT(max_rel(c_p, b_p), 1e-5);
}

TEST(FusedAdamW, WhatItDoesNotFuseIsLibTorchsStepExactly) {
  for (const bool amsgrad : {false, true}) {
    const auto type = amsgrad ? at::kFloat : at::kDouble;  // float64, or amsgrad
    const auto fused_p = make_params(type), ref_p = make_params(type);
    auto fused = make<FusedAdamW>(fused_p, amsgrad);
    auto ref = make<AdamW>(ref_p, amsgrad);
    steps(*fused, fused_p, 0, 9, /*clip=*/2.0);
    clipped_steps_by_libtorch(*ref, ref_p, 0, 9, 2.0);
    for (std::size_t i = 0; i < fused_p.size(); ++i) EXPECT_TRUE(fused_p[i].equal(ref_p[i])) << i;
  }
}

// Parameters the fused loop does not take (not contiguous here) go through the multi-tensor
// update: LibTorch's AdamW arithmetic op for op, so the same bits as LibTorch's step.
TEST(FusedAdamW, ItsMultiTensorUpdateIsLibTorchsStepBitForBit) {
  const auto strided = [] {
    auto p = make_params();
    p[0] = p[0].detach().t().set_requires_grad(true);  // a leaf with strides [1, 5]
    return p;
  };
  const auto multi_p = strided(), ref_p = strided();
  ASSERT_FALSE(multi_p[0].is_contiguous());
  auto multi = make<FusedAdamW>(multi_p);
  auto ref = make<AdamW>(ref_p);
  steps(*multi, multi_p, 0, 9, /*clip=*/2.0);
  clipped_steps_by_libtorch(*ref, ref_p, 0, 9, 2.0);
  for (std::size_t i = 0; i < multi_p.size(); ++i) EXPECT_TRUE(multi_p[i].equal(ref_p[i])) << i;
  EXPECT_GT(max_rel(multi_p, strided()), 0.1);  // they moved
}

// The multi-tensor update in float64 against the fused float32 loop: the same arithmetic, so
// they differ by float32's rounding alone.
TEST(FusedAdamW, ItsMultiTensorUpdateInFloat64MatchesTheFusedLoop) {
  const auto fused_p = make_params();
  std::vector<at::Tensor> multi_p;  // the same starting values, in float64
  for (const auto& p : make_params()) multi_p.push_back(p.detach().to(at::kDouble).set_requires_grad(true));
  auto multi = make<FusedAdamW>(multi_p);
  auto fused = make<FusedAdamW>(fused_p);
  steps(*multi, multi_p, 0, 30, /*clip=*/2.0);
  steps(*fused, fused_p, 0, 30, /*clip=*/2.0);
  std::vector<at::Tensor> as_float;
  for (const auto& p : multi_p) as_float.push_back(p.to(at::kFloat));
  EXPECT_LT(max_rel(fused_p, as_float), 1e-5);
}

// On a GPU (LRB_TEST_DEVICE=cuda, scripts/device_check.sh) every parameter takes the
// multi-tensor update: LibTorch's step to within the device's rounding, and its state loads
// into LibTorch's AdamW.
TEST(FusedAdamW, OnAGpuItsMultiTensorUpdateFollowsLibTorch) {
  const char* device = std::getenv("LRB_TEST_DEVICE");
  if (device == nullptr || std::string(device).rfind("cuda", 0) != 0)
    GTEST_SKIP() << "no GPU asked for (LRB_TEST_DEVICE=cuda runs it)";
  const auto on_device = [&] {
    auto p = make_params();
    for (auto& t : p) t = t.detach().to(at::Device(device)).set_requires_grad(true);
    return p;
  };
  const auto multi_p = on_device(), ref_p = on_device();
  auto multi = make<FusedAdamW>(multi_p);
  auto ref = make<AdamW>(ref_p);
  steps(*multi, multi_p, 0, 20, /*clip=*/2.0);
  clipped_steps_by_libtorch(*ref, ref_p, 0, 20, 2.0);
  EXPECT_LT(max_rel(multi_p, ref_p), 1e-5);
  auto back = make<AdamW>(ref_p);
  continue_in(*multi, multi_p, *back, ref_p);
  steps(*back, ref_p, 20, 25);
  steps(*multi, multi_p, 20, 25);
  EXPECT_LT(max_rel(multi_p, ref_p), 1e-5);
}

TEST(FusedAdamW, BumpsTheVersionsItsInPlaceUpdateChanges) {
  const auto p = make_params();
  auto opt = make<FusedAdamW>(p);
  const auto before = p[0]._version();
  steps(*opt, p, 0, 1);
  EXPECT_GT(p[0]._version(), before);
}

}  // namespace
}  // namespace lrb
