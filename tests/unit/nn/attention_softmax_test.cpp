#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "tests/support/attention_test_util.h"
#include "suite/nn/attention/proportional.h"
#include "suite/nn/attention/softmax.h"

namespace lrb {
namespace {

using namespace lrb::test;

TEST(AttentionSoftmax, FullMatchesReference) {
  at::manual_seed(1);
  for (const bool masked : {false, true}) {
    const auto in = random_qkv(2, 3, 37, 8);
    const at::Tensor mask = masked ? length_mask({37, 25}, 37) : at::Tensor();
    const double scale = 1.0 / std::sqrt(8.0);
    expect_matches(
        [&](auto& q, auto& k, auto& v) { return softmax_attention(q, k, v, mask); },
        [&](auto& q, auto& k, auto& v) {
          return dense_reference(q, k, v, masked ? key_pattern(mask) : at::ones({1}, at::kBool), scale);
        },
        in.q, in.k, in.v, mask);
  }
}

TEST(AttentionSoftmax, ChunkedMatchesReferenceForAnyChunk) {
  at::manual_seed(2);
  const double scale = 0.3;
  // Heads of 8 take the fused small-head group; heads of 12 the products with the fused row
  // passes, the key gradients added into dK and dV chunk after chunk.
  for (const std::int64_t d : {8, 12}) {
    for (const std::int64_t chunk : {1, 8, 16, 37, 100}) {
      SCOPED_TRACE("d " + std::to_string(d) + ", chunk " + std::to_string(chunk));
      const auto in = random_qkv(2, 2, 37, d);
      const at::Tensor mask = length_mask({30, 37}, 37);
      expect_matches(
          [&](auto& q, auto& k, auto& v) { return chunked_softmax_attention(q, k, v, mask, chunk, scale); },
          [&](auto& q, auto& k, auto& v) { return dense_reference(q, k, v, key_pattern(mask), scale); }, in.q,
          in.k, in.v, mask);
    }
  }
}

TEST(AttentionSoftmax, ChunkedCrossAttention) {
  at::manual_seed(3);
  const auto in = random_qkv(1, 2, 19, 8, /*Nk=*/45);
  const at::Tensor mask = length_mask({40}, 45);
  expect_matches(
      [&](auto& q, auto& k, auto& v) { return chunked_softmax_attention(q, k, v, mask, 6); },
      [&](auto& q, auto& k, auto& v) { return dense_reference(q, k, v, key_pattern(mask), 1.0 / std::sqrt(8.0)); },
      in.q, in.k, in.v);
}

// A batch element whose keys are all padding attends to nothing: zero rows and zero
// gradients in both forms, never NaN; the other elements are untouched.
TEST(AttentionSoftmax, RowsWithNoRealKeyGiveZerosNotNaN) {
  at::manual_seed(5);
  const auto in = random_qkv(2, 2, 9, 4);
  at::Tensor mask = at::ones({2, 9}, at::kBool);
  mask[0].fill_(false);
  for (const bool chunked : {false, true}) {
    SCOPED_TRACE(chunked ? "chunked" : "full");
    const at::Tensor q = in.q.clone().requires_grad_(), k = in.k.clone().requires_grad_(), v = in.v.clone().requires_grad_();
    const at::Tensor out = chunked ? chunked_softmax_attention(q, k, v, mask, 4) : softmax_attention(q, k, v, mask);
    ASSERT_TRUE(at::isfinite(out).all().item<bool>());
    EXPECT_TRUE(out[0].eq(0).all().item<bool>());
    EXPECT_TRUE(at::allclose(out[1], softmax_attention(in.q, in.k, in.v).select(0, 1), 1e-5, 1e-6));
    out.sum().backward();
    for (const at::Tensor* g : {&q, &k, &v}) {
      ASSERT_TRUE(at::isfinite(g->grad()).all().item<bool>());
      EXPECT_TRUE(g->grad()[0].eq(0).all().item<bool>());
    }
  }
}

TEST(AttentionSoftmax, ScoreCounts) {
  EXPECT_EQ(softmax_score_elements(2, 3, 10, 20), 2 * 3 * 10 * 20);
  EXPECT_EQ(chunked_softmax_score_elements(1, 1, 10, 20, 4), 12 * 20);  // 3 chunks of 4 rows
}

TEST(AttentionProportional, AddsLogSizesToKeyLogits) {
  at::manual_seed(4);
  for (const std::int64_t chunk : {0, 7}) {
    const auto in = random_qkv(2, 3, 23, 8);
    const at::Tensor sizes = at::randint(1, 6, {2, 23}, at::kDouble);
    const at::Tensor mask = length_mask({23, 17}, 23);
    const double scale = 1.0 / std::sqrt(8.0);
    expect_matches(
        [&](auto& q, auto& k, auto& v) { return proportional_attention(q, k, v, sizes, mask, chunk); },
        [&](auto& q, auto& k, auto& v) {
          return dense_reference(q, k, v, key_pattern(mask), scale, sizes.log().view({2, 1, 1, 23}));
        },
        in.q, in.k, in.v, mask);
  }
}

TEST(AttentionProportional, SizeSMatchesSDuplicatedKeys) {
  // A key of size 2 weighs exactly like the same key present twice.
  at::manual_seed(5);
  const auto in = random_qkv(1, 1, 4, 8);
  const at::Tensor sizes = at::tensor({1.0, 2.0, 1.0, 1.0}, at::kDouble).view({1, 4});
  const at::Tensor a = proportional_attention(in.q, in.k, in.v, sizes);
  const at::Tensor k2 = at::cat({in.k, in.k.narrow(2, 1, 1)}, 2), v2 = at::cat({in.v, in.v.narrow(2, 1, 1)}, 2);
  const at::Tensor b = softmax_attention(in.q, k2, v2);
  EXPECT_LT(rel_error(a, b), 1e-12);
}

}  // namespace
}  // namespace lrb
