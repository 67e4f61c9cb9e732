// The fused small-head softmax attention (suite/nn/cpu/small_head_softmax.h): values and
// gradients against the float64 reference on every shape its loops treat differently (key
// counts below, at and past a multiple of 8; one key; cross attention), with key padding, a
// batch element with no key, a key bias, strided inputs and scores far apart; and when
// softmax_attention takes it.
#include <gtest/gtest.h>
#include <torch/csrc/autograd/function.h>

#include <cmath>
#include <string>

#include "suite/nn/attention/softmax.h"
#include "suite/nn/cpu/small_head_softmax.h"
#include "suite/runtime/torch_compat_autocast.h"
#include "tests/support/attention_test_util.h"

namespace lrb {
namespace {

using namespace lrb::test;

bool took_fused_path(const at::Tensor& out) {
  return out.grad_fn() && out.grad_fn()->name().find("FusedSoftmax") != std::string::npos;
}

TEST(FusedSoftmax, TakesCpuFloat32HeadsOfEightOutsideAutocast) {
  const at::Tensor x = at::randn({2, 3, 5, 8});
  EXPECT_TRUE(fused_softmax_applies(x, x, x));
  EXPECT_FALSE(fused_softmax_applies(x.to(at::kDouble), x.to(at::kDouble), x.to(at::kDouble)));
  const at::Tensor wide = at::randn({2, 3, 5, 16}), narrow = at::randn({2, 3, 5, 4});
  EXPECT_FALSE(fused_softmax_applies(wide, wide, wide));
  EXPECT_FALSE(fused_softmax_applies(narrow, narrow, narrow));
  EXPECT_FALSE(fused_softmax_applies(x, x, wide));  // v's head differs
  torch_compat::set_autocast_enabled(at::kCPU, true);
  const bool under_autocast = fused_softmax_applies(x, x, x);
  torch_compat::set_autocast_enabled(at::kCPU, false);
  EXPECT_FALSE(under_autocast);
  // softmax_attention takes it exactly there.
  const at::Tensor q = x.clone().requires_grad_();
  EXPECT_TRUE(took_fused_path(softmax_attention(q, x, x)));
  const at::Tensor qw = wide.clone().requires_grad_();
  EXPECT_FALSE(took_fused_path(softmax_attention(qw, wide, wide)));
}

TEST(FusedSoftmax, MatchesTheFloat64ReferenceOnEveryKeyCount) {
  at::manual_seed(11);
  // Every compilation of the head kernels this CPU runs.
  test::for_each_simd_level([&](const char*) {
    for (const std::int64_t n : {1, 3, 8, 9, 16, 37, 197}) {
      SCOPED_TRACE("N = " + std::to_string(n));
      const auto in = random_qkv(2, 3, n, 8);
      const double scale = 1.0 / std::sqrt(8.0);
      expect_matches(
          [&](auto& q, auto& k, auto& v) {
            if (!q.device().is_cpu()) return softmax_attention(q, k, v);
            EXPECT_TRUE(fused_softmax_applies(q, k, v));
            return fused_softmax_attention(q, k, v, {}, scale, {});
          },
          [&](auto& q, auto& k, auto& v) { return dense_reference(q, k, v, at::ones({1}, at::kBool), scale); },
          in.q, in.k, in.v);
    }
  });
}

TEST(FusedSoftmax, CrossAttentionWithPaddingAndBias) {
  at::manual_seed(12);
  const auto in = random_qkv(3, 2, 5, 8, /*Nk=*/29);
  const at::Tensor mask = length_mask({29, 17, 1}, 29);
  const at::Tensor bias = at::randn({3, 29}, at::kDouble) * 2;
  const double scale = 0.4;
  expect_matches(
      [&](auto& q, auto& k, auto& v) {
        return fused_softmax_attention(q, k, v, mask, scale, bias.to(at::kFloat));
      },
      [&](auto& q, auto& k, auto& v) {
        return dense_reference(q, k, v, key_pattern(mask), scale, bias.view({3, 1, 1, 29}));
      },
      in.q, in.k, in.v);
}

TEST(FusedSoftmax, StridedInputsAndScoresFarApart) {
  at::manual_seed(13);
  // q, k, v as views into one packed projection [B, N, 3, H, 8], as the Transformer makes them;
  // a scale that puts scores hundreds apart, so most probabilities underflow to exactly 0.
  const at::Tensor packed = at::randn({2, 21, 3, 4, 8}, at::kDouble);
  const at::Tensor q = packed.select(2, 0).permute({0, 2, 1, 3}), k = packed.select(2, 1).permute({0, 2, 1, 3}),
                   v = packed.select(2, 2).permute({0, 2, 1, 3});
  for (const double scale : {0.35, 40.0}) {
    SCOPED_TRACE("scale " + std::to_string(scale));
    expect_matches(
        [&](auto& qq, auto& kk, auto& vv) {
          // The same strides in float32: a packed copy, permuted again.
          const at::Tensor p = at::stack({qq, kk, vv}, 0).permute({1, 3, 0, 2, 4}).contiguous();
          const at::Tensor pq = p.select(2, 0).permute({0, 2, 1, 3});
          EXPECT_FALSE(pq.is_contiguous());
          return fused_softmax_attention(pq, p.select(2, 1).permute({0, 2, 1, 3}),
                                         p.select(2, 2).permute({0, 2, 1, 3}), {}, scale, {});
        },
        [&](auto& qq, auto& kk, auto& vv) { return dense_reference(qq, kk, vv, at::ones({1}, at::kBool), scale); },
        q, k, v);
  }
}

TEST(FusedSoftmax, ABatchElementWithNoKeyGivesZerosAndZeroGradients) {
  at::manual_seed(14);
  const auto in = random_qkv(2, 2, 13, 8);
  at::Tensor mask = at::ones({2, 13}, at::kBool);
  mask[1].fill_(false);
  const at::Tensor q = in.q.to(at::kFloat).requires_grad_(), k = in.k.to(at::kFloat).requires_grad_(),
                   v = in.v.to(at::kFloat).requires_grad_();
  const at::Tensor out = fused_softmax_attention(q, k, v, mask, 0.35, {});
  ASSERT_TRUE(at::isfinite(out).all().item<bool>());
  EXPECT_TRUE(out[1].eq(0).all().item<bool>());
  EXPECT_LT(max_abs_diff(out[0], softmax_attention(in.q, in.k, in.v, {}, 0.35).select(0, 0)), 1e-5);
  out.sum().backward();
  for (const at::Tensor* g : {&q, &k, &v}) {
    ASSERT_TRUE(at::isfinite(g->grad()).all().item<bool>());
    EXPECT_TRUE(g->grad()[1].eq(0).all().item<bool>());
    EXPECT_GT(g->grad()[0].abs().max().item<double>(), 0);
  }
}

TEST(FusedSoftmax, WithoutGradientsItGivesTheSameOutput) {
  at::manual_seed(15);
  const at::Tensor q = at::randn({2, 4, 50, 8}), k = at::randn({2, 4, 50, 8}), v = at::randn({2, 4, 50, 8});
  const at::Tensor mask = length_mask({50, 31}, 50);
  const at::Tensor with = fused_softmax_attention(q.clone().requires_grad_(), k, v, mask, 0.35, {});
  at::Tensor without;
  {
    at::NoGradGuard no_grad;
    without = fused_softmax_attention(q, k, v, mask, 0.35, {});
  }
  EXPECT_TRUE(took_fused_path(with));
  EXPECT_FALSE(without.requires_grad());
  EXPECT_TRUE(without.equal(with.detach()));
}

}  // namespace
}  // namespace lrb
