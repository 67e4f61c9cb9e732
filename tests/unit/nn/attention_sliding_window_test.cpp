#include <gtest/gtest.h>

#include <cmath>

#include "suite/core/errors.h"
#include "suite/nn/attention/sliding_window.h"
#include "suite/nn/cpu/blocked_small_head.h"
#include "suite/nn/cpu/small_head_softmax.h"
#include "suite/runtime/torch_compat_autocast.h"
#include "tests/support/attention_test_util.h"

namespace lrb {
namespace {

using namespace lrb::test;

// [B, 1, N, N]: |i - j| <= w, or i or j global; masked keys never.
at::Tensor band_pattern(std::int64_t B, std::int64_t N, std::int64_t w, const at::Tensor& global_rows,
                        const at::Tensor& mask) {
  const at::Tensor pos = at::arange(N, at::kLong);
  at::Tensor allowed = (pos.view({N, 1}) - pos.view({1, N})).abs().le(w).view({1, 1, N, N}).expand({B, 1, N, N});
  if (global_rows.defined()) {
    const at::Tensor g = global_rows.view({B, 1, N});  // bool [B, N]
    allowed = allowed.logical_or(g.view({B, 1, N, 1})).logical_or(g.view({B, 1, 1, N}));
  }
  if (mask.defined()) allowed = allowed.logical_and(key_pattern(mask));
  return allowed;
}

at::Tensor global_bool(const std::vector<std::vector<std::int64_t>>& rows, std::int64_t N) {
  at::Tensor g = at::zeros({static_cast<std::int64_t>(rows.size()), N}, at::kBool);
  for (std::size_t b = 0; b < rows.size(); ++b)
    for (auto p : rows[b]) g[b][p] = true;
  return g;
}

struct Case {
  std::int64_t B, H, N, d, w, block;
  std::vector<std::vector<std::int64_t>> global;  // per batch element
  std::vector<std::int64_t> lengths;              // empty: no mask
};

void check_case(const Case& c) {
  SCOPED_TRACE("N=" + std::to_string(c.N) + " w=" + std::to_string(c.w) + " block=" + std::to_string(c.block));
  const auto in = random_qkv(c.B, c.H, c.N, c.d);
  const at::Tensor mask = c.lengths.empty() ? at::Tensor() : length_mask(c.lengths, c.N);
  at::Tensor gidx, gmask;
  if (!c.global.empty() && !c.global[0].empty()) {
    gmask = global_bool(c.global, c.N);
    std::vector<std::int64_t> flat;
    for (const auto& r : c.global) flat.insert(flat.end(), r.begin(), r.end());
    gidx = at::tensor(flat, at::kLong).view({c.B, -1});
  }
  SlidingWindowOptions o;
  o.window = c.w;
  o.block = c.block;
  const double scale = 1.0 / std::sqrt(static_cast<double>(c.d));
  const at::Tensor pattern = band_pattern(c.B, c.N, c.w, gmask, mask);
  expect_matches([&](auto& q, auto& k, auto& v) { return sliding_window_attention(q, k, v, o, mask, gidx); },
                 [&](auto& q, auto& k, auto& v) { return dense_reference(q, k, v, pattern, scale); }, in.q, in.k,
                 in.v, mask);
}

TEST(AttentionSlidingWindow, NotAMultipleOfTheBlockWithPadding) {
  at::manual_seed(10);
  check_case({2, 2, 100, 8, 8, 0, {}, {100, 83}});
  check_case({1, 3, 77, 8, 16, 8, {}, {}});
  check_case({2, 1, 61, 4, 3, 0, {}, {50, 61}});
}

TEST(AttentionSlidingWindow, SequenceShorterThanTheWindow) {
  at::manual_seed(11);
  check_case({2, 2, 20, 8, 32, 0, {}, {20, 13}});
  check_case({1, 2, 5, 8, 256, 0, {{0}}, {}});
}

TEST(AttentionSlidingWindow, GlobalTokensAtStartEndAndPerBatch) {
  at::manual_seed(12);
  check_case({2, 2, 77, 8, 5, 0, {{0}, {0}}, {77, 64}});            // start (CLS)
  check_case({2, 2, 77, 8, 5, 4, {{76}, {76}}, {}});                 // end
  check_case({2, 3, 90, 8, 7, 0, {{0, 50}, {3, 70}}, {90, 80}});     // different per batch element
  check_case({1, 2, 40, 8, 30, 0, {{0, 20, 39}}, {}});               // globals inside every window
}

TEST(AttentionSlidingWindow, FusedGroupWhereItAppliesAndTheOpsElsewhere) {
  // The blocked engine fuses a group for CPU float32 heads of 8 outside autocast.
  const at::Tensor x = at::randn({1, 2, 5, 8});
  EXPECT_TRUE(blocked_small_head_applies(x, x, x));
  EXPECT_FALSE(blocked_small_head_applies(x.to(at::kDouble), x.to(at::kDouble), x.to(at::kDouble)));
  const at::Tensor wide = at::randn({1, 2, 5, 16});
  EXPECT_FALSE(blocked_small_head_applies(x, x, wide));
  torch_compat::set_autocast_enabled(at::kCPU, true);
  const bool under_autocast = blocked_small_head_applies(x, x, x);
  torch_compat::set_autocast_enabled(at::kCPU, false);
  EXPECT_FALSE(under_autocast);
  at::manual_seed(34);
  // Both compilations of the fused group, with globals, padding and a partial last block;
  // then heads of 16 through LibTorch's ops.
  test::for_each_simd_level([&](const char*) {
    check_case({2, 3, 90, 8, 7, 0, {{0, 50}, {3, 70}}, {90, 80}});
    check_case({2, 2, 100, 8, 8, 16, {}, {100, 83}});
  });
  check_case({2, 2, 90, 16, 7, 0, {{0, 50}, {3, 70}}, {90, 80}});
}

TEST(AttentionSlidingWindow, WindowZeroAndOne) {
  at::manual_seed(13);
  check_case({1, 2, 33, 8, 0, 0, {}, {}});
  check_case({2, 2, 33, 8, 1, 0, {{5}, {9}}, {33, 30}});
}

TEST(AttentionSlidingWindow, GlobalPositionFormsAgree) {
  at::manual_seed(14);
  const auto in = random_qkv(2, 2, 50, 8);
  SlidingWindowOptions o;
  o.window = 4;
  const at::Tensor by_list = sliding_window_attention(in.q, in.k, in.v, o, {}, at::tensor({0, 49}, at::kLong));
  const at::Tensor by_mask = sliding_window_attention(in.q, in.k, in.v, o, {}, global_bool({{0, 49}, {0, 49}}, 50));
  const at::Tensor by_rows =
      sliding_window_attention(in.q, in.k, in.v, o, {}, at::tensor({0, 49, 0, 49}, at::kLong).view({2, 2}));
  EXPECT_LT(rel_error(by_mask, by_list), 1e-14);
  EXPECT_LT(rel_error(by_rows, by_list), 1e-14);
  EXPECT_THROW(sliding_window_attention(in.q, in.k, in.v, o, {}, at::tensor({3, 3}, at::kLong)), UserError);
  EXPECT_THROW(sliding_window_attention(in.q, in.k, in.v, o, {}, at::tensor({50}, at::kLong)), UserError);
}

TEST(AttentionSlidingWindow, SeparateGlobalProjections) {
  // Global rows use (q_g, k_g, v_g) over all tokens; local rows see global keys through k, v.
  at::manual_seed(15);
  const std::int64_t B = 2, H = 2, N = 45, d = 8, w = 4;
  const auto in = random_qkv(B, H, N, d);
  const at::Tensor mask = length_mask({45, 40}, N);
  const at::Tensor gmask = global_bool({{0, 44}, {0, 44}}, N);
  const at::Tensor wq = at::randn({d, d}, at::kDouble), wk = at::randn({d, d}, at::kDouble),
                   wv = at::randn({d, d}, at::kDouble);
  SlidingWindowOptions o;
  o.window = w;
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  expect_matches(
      [&](auto& q, auto& k, auto& v) {
        const auto like_q = [&](const at::Tensor& w) { return w.to(q.device(), q.scalar_type()); };
        const GlobalProjections gp{at::matmul(q, like_q(wq)), at::matmul(k, like_q(wk)), at::matmul(v, like_q(wv))};
        return sliding_window_attention(q, k, v, o, mask, gmask, gp);
      },
      [&](auto& q, auto& k, auto& v) {
        const at::Tensor local = dense_reference(q, k, v, band_pattern(B, N, w, gmask, mask), scale);
        const at::Tensor global = dense_reference(at::matmul(q, wq), at::matmul(k, wk), at::matmul(v, wv),
                                                  key_pattern(mask), scale);
        return at::where(gmask.view({B, 1, N, 1}), global, local);
      },
      in.q, in.k, in.v, mask);
}

TEST(AttentionSlidingWindow, ScoreElementsWithinOneAndAHalfTimesTheBand) {
  for (const std::int64_t w : {0, 1, 2, 3, 7, 8, 31, 64, 100, 256, 300}) {
    SlidingWindowOptions o;
    o.window = w;
    const std::int64_t N = 4096;
    const double band = static_cast<double>(N) * (2 * w + 1);
    EXPECT_LE(sliding_window_score_elements(1, 1, N, o), 1.5 * band) << "w=" << w;
  }
  SlidingWindowOptions o;  // w = 256, b = 64: (2w+b)/(2w+1)
  EXPECT_NEAR(static_cast<double>(sliding_window_score_elements(1, 1, 8192, o)) / (8192.0 * 513), 576.0 / 513, 1e-12);
}

}  // namespace
}  // namespace lrb
