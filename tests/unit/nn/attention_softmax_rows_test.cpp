#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "suite/nn/attention/block_sparse.h"
#include "suite/nn/attention/sliding_window.h"
#include "suite/nn/attention/softmax.h"
#include "suite/nn/cpu/small_head_softmax.h"
#include "suite/nn/cpu/softmax_rows.h"
#include "suite/runtime/torch_compat_autocast.h"
#include "tests/support/attention_test_util.h"

namespace lrb {
namespace {

using namespace lrb::test;

constexpr double kInf = std::numeric_limits<double>::infinity();

// The blocked engine's general path in LibTorch's ops (blocked_attention.cpp), on s's shape.
struct Reference {
  at::Tensor p, lse;
};
Reference reference_softmax(const at::Tensor& s_in, const at::Tensor& bias, const at::Tensor& drop) {
  at::Tensor s = s_in.to(at::kDouble);
  if (bias.defined()) s = s + bias.to(at::kDouble);
  if (drop.defined()) s = s.masked_fill(drop, -kInf);
  at::Tensor m = s.amax(-1, true);
  m.masked_fill_(m.eq(-kInf), 0);
  at::Tensor p = (s - m).exp();
  const at::Tensor l = p.sum(-1, true);
  const at::Tensor dead = l.eq(0);
  p = p / l.masked_fill(dead, 1);
  return {p, (m + l.log()).masked_fill(dead, kInf)};
}

// max |a - b| over the finite entries; +inf entries must agree exactly.
double diff_with_infinities(const at::Tensor& a, const at::Tensor& b) {
  const at::Tensor ad = a.to(at::kDouble), bd = b.to(at::kDouble);
  EXPECT_TRUE(ad.isinf().equal(bd.isinf())) << "infinite entries differ";
  const at::Tensor finite = bd.isfinite();
  return (ad - bd).masked_fill(finite.logical_not(), 0).abs().max().item<double>();
}

struct RowCase {
  std::string name;
  std::vector<std::int64_t> bias_shape, drop_shape;  // empty: none
};

TEST(SoftmaxRows, RowPassesMatchLibTorchsOps) {
  // [B, H, n, bq, keys]; the bias and drop broadcast as the layouts make them (per key, per
  // block and query, per head), a bias of one value over every key (copied at its own size),
  // and drop patterns with rows that keep nothing.
  const std::vector<RowCase> cases = {
      {"none", {}, {}},
      {"key bias and key drop", {2, 1, 1, 1, -1}, {2, 1, 1, 1, -1}},
      {"band drop per query", {}, {2, 1, 2, 5, -1}},
      {"block drop per head", {}, {2, 3, 2, 1, -1}},
      {"bias per query, one value over the keys", {1, 1, 2, 5, 1}, {}},
      {"bias and drop per query", {2, 3, 2, 5, -1}, {2, 3, 2, 5, -1}},
  };
  at::manual_seed(51);
  // Every compilation: the widest this processor runs (AVX-512 where it has it), AVX2, the
  // baseline.
  test::for_each_simd_level([&](const char* code) {
    for (const std::int64_t keys : {1, 7, 8, 13, 15, 16, 17, 64, 67}) {
      for (const auto& c : cases) {
        SCOPED_TRACE(c.name + ", keys " + std::to_string(keys) + ", " + code);
        const auto with_keys = [&](std::vector<std::int64_t> shape) {
          if (!shape.empty() && shape.back() == -1) shape.back() = keys;
          return shape;
        };
        const at::Tensor s0 = at::randn({2, 3, 2, 5, keys}) * 4;
        const at::Tensor bias = c.bias_shape.empty() ? at::Tensor() : at::randn(with_keys(c.bias_shape));
        at::Tensor drop;
        if (!c.drop_shape.empty()) {
          drop = at::rand(with_keys(c.drop_shape)).lt(0.4);
          drop.select(0, 1).fill_(true);  // batch element 1 keeps no key: dead rows
        }
        const Reference want = reference_softmax(s0, bias, drop);
        ASSERT_TRUE(softmax_rows_fused_applies(s0));
        at::Tensor p = s0.clone();
        // The lse as a strided view, as the engine hands over a group's slice.
        at::Tensor lse_store = at::full({2, 3, 4, 5, 1}, -1.0f);
        at::Tensor lse = lse_store.narrow(2, 1, 2);
        softmax_rows_forward(p, bias, drop, lse);
        EXPECT_LT(diff_with_infinities(p, want.p), 2e-6) << "probabilities";
        EXPECT_LT(diff_with_infinities(lse, want.lse), 2e-5) << "lse";
        EXPECT_TRUE(lse_store.narrow(2, 0, 1).eq(-1).all().item<bool>()) << "wrote outside its rows";
        EXPECT_TRUE(lse_store.narrow(2, 3, 1).eq(-1).all().item<bool>()) << "wrote outside its rows";
        if (drop.defined()) {
          EXPECT_TRUE(p.select(0, 1).eq(0).all().item<bool>()) << "dead rows are zeros";
          EXPECT_TRUE(lse.select(0, 1).isposinf().all().item<bool>()) << "dead rows' lse is +inf";
        }

        // The backward's probabilities from the scores and that lse.
        at::Tensor again = s0.clone();
        softmax_rows_recompute(again, bias, drop, lse);
        EXPECT_LT(diff_with_infinities(again, want.p), 2e-6) << "recomputed probabilities";

        // The scores' gradient: (dP - delta) * P, delta a strided [..., 1] view.
        const at::Tensor dp = at::randn(s0.sizes());
        const at::Tensor delta = at::randn({2, 3, 2, 5, 2}).narrow(4, 1, 1);
        at::Tensor ds = dp.clone();
        softmax_rows_score_gradient(ds, p, delta);
        EXPECT_LT(max_abs_diff(ds, (dp.to(at::kDouble) - delta.to(at::kDouble)) * p.to(at::kDouble)), 1e-6);
      }
    }
  });
}

TEST(SoftmaxRows, NaNScoresStayNaN) {
  at::Tensor s = at::randn({1, 1, 1, 2, 19});
  s[0][0][0][0][11] = std::numeric_limits<float>::quiet_NaN();
  at::Tensor lse = at::empty({1, 1, 1, 2, 1});
  softmax_rows_forward(s, {}, {}, lse);
  EXPECT_TRUE(s[0][0][0][0].isnan().all().item<bool>());
  EXPECT_TRUE(std::isnan(lse[0][0][0][0][0].item<float>()));
  EXPECT_FALSE(s[0][0][0][1].isnan().any().item<bool>()) << "the other row is untouched by it";
}

TEST(SoftmaxRows, TakesCpuFloatsOutsideAutocast) {
  const at::Tensor s = at::randn({2, 3, 4});
  EXPECT_TRUE(softmax_rows_fused_applies(s));
  EXPECT_FALSE(softmax_rows_fused_applies(s.to(at::kDouble)));
  EXPECT_FALSE(softmax_rows_fused_applies(s.to(at::kBFloat16)));
  EXPECT_FALSE(softmax_rows_fused_applies(s.transpose(1, 2)));
  EXPECT_FALSE(softmax_rows_fused_applies(at::Tensor()));
  torch_compat::set_autocast_enabled(at::kCPU, true);
  const bool under_autocast = softmax_rows_fused_applies(s);
  torch_compat::set_autocast_enabled(at::kCPU, false);
  EXPECT_FALSE(under_autocast);
  const at::Tensor recorded = s.clone().requires_grad_(true);
  EXPECT_FALSE(softmax_rows_fused_applies(recorded)) << "autograd records it";
  {
    at::NoGradGuard no_grad;
    EXPECT_TRUE(softmax_rows_fused_applies(recorded));
  }
  const bool before = softmax_rows_use_general_path(true);
  EXPECT_FALSE(softmax_rows_fused_applies(s));
  softmax_rows_use_general_path(before);
  EXPECT_TRUE(softmax_rows_fused_applies(s));
}

// A kernel's float32 outputs and gradients with the fused row passes and with LibTorch's ops.
void expect_paths_agree(const Kernel& kernel, const Qkv& in, double tolerance = 2e-5) {
  const at::Tensor upstream = at::randn({in.q.size(0), in.q.size(1), in.q.size(2), in.v.size(3)}, at::kDouble);
  const auto on = [&](bool general) {
    return run_on_path(
        softmax_rows_use_general_path, general, {in.q, in.k, in.v},
        [&](const std::vector<at::Tensor>& x) { return kernel(x[0], x[1], x[2]); }, upstream, at::kFloat, false);
  };
  const auto fused = on(false), general = on(true);
  const char* what[] = {"output", "grad q", "grad k", "grad v"};
  for (std::size_t i = 0; i < fused.size(); ++i) EXPECT_LT(rel_error(fused[i], general[i]), tolerance) << what[i];
  EXPECT_FALSE(fused[0].isnan().any().item<bool>());
}

TEST(SoftmaxRows, BlockedKernelsAgreeWithTheGeneralPath) {
  at::manual_seed(52);
  // Heads of 12 and 16 (heads of 8 take the fused small-head group instead).
  {
    SCOPED_TRACE("chunked softmax, key padding, a batch element with no key, a key bias");
    const auto in = random_qkv(3, 2, 45, 12);
    const at::Tensor mask = length_mask({45, 17, 0}, 45);
    const at::Tensor bias = at::randn({3, 45});
    expect_paths_agree(
        [&](auto& q, auto& k, auto& v) { return chunked_softmax_attention(q, k, v, mask, 16, 0, bias); }, in);
  }
  {
    SCOPED_TRACE("sliding window, key padding, partial last block");
    const auto in = random_qkv(2, 3, 101, 16);
    const at::Tensor mask = length_mask({101, 60}, 101);
    SlidingWindowOptions o;
    o.window = 9;
    o.block = 8;
    expect_paths_agree([&](auto& q, auto& k, auto& v) { return sliding_window_attention(q, k, v, o, mask); }, in);
  }
  {
    SCOPED_TRACE("sliding window with global tokens (gathered keys, scattered gradients)");
    const auto in = random_qkv(2, 2, 70, 12);
    SlidingWindowOptions o;
    o.window = 6;
    o.block = 5;
    const at::Tensor global = at::tensor({0, 33}, at::kLong);
    expect_paths_agree([&](auto& q, auto& k, auto& v) { return sliding_window_attention(q, k, v, o, {}, global); },
                       in);
  }
  {
    SCOPED_TRACE("block sparse, key padding");
    const auto in = random_qkv(2, 2, 96, 12);
    const at::Tensor mask = length_mask({96, 50}, 96);
    BlockSparseOptions o;
    o.block = 8;
    o.random_blocks = 2;
    expect_paths_agree([&](auto& q, auto& k, auto& v) { return block_sparse_attention(q, k, v, o, mask).out; }, in);
  }
}

}  // namespace
}  // namespace lrb
