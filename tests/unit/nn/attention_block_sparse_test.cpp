#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "suite/core/errors.h"
#include "suite/nn/attention/block_sparse.h"
#include "suite/nn/cpu/small_head_softmax.h"
#include "tests/support/attention_test_util.h"

namespace lrb {
namespace {

using namespace lrb::test;

// BigBird's pattern from the returned table, on token indices: [1, H, N, N].
at::Tensor bigbird_pattern(std::int64_t H, std::int64_t N, std::int64_t b, const at::Tensor& table) {
  const std::int64_t nb = (N + b - 1) / b;
  at::Tensor allowed = at::zeros({1, H, N, N}, at::kBool);
  auto a = allowed.accessor<bool, 4>();
  auto t = table.accessor<std::int64_t, 3>();
  for (std::int64_t h = 0; h < H; ++h)
    for (std::int64_t i = 0; i < N; ++i) {
      const std::int64_t qb = i / b;
      for (std::int64_t j = 0; j < N; ++j) {
        const std::int64_t kb = j / b;
        bool ok = qb == 0 || qb == nb - 1 || kb == 0 || kb == nb - 1 || std::abs(kb - qb) <= 1;
        if (!ok && qb >= 1 && qb <= nb - 2)
          for (std::int64_t r = 0; r < table.size(2); ++r) ok = ok || t[h][qb - 1][r] == kb;
        a[0][h][i][j] = ok;
      }
    }
  return allowed;
}

void check_case(std::int64_t B, std::int64_t H, std::int64_t N, std::int64_t b, std::int64_t r,
                const std::vector<std::int64_t>& lengths, std::uint64_t seed) {
  SCOPED_TRACE("N=" + std::to_string(N) + " b=" + std::to_string(b) + " r=" + std::to_string(r));
  const auto in = random_qkv(B, H, N, 8);
  const at::Tensor mask = lengths.empty() ? at::Tensor() : length_mask(lengths, N);
  BlockSparseOptions o;
  o.block = b;
  o.random_blocks = r;
  o.seed = seed;
  const auto probe = block_sparse_attention(in.q, in.k, in.v, o, mask);
  ASSERT_FALSE(probe.dense_fallback);
  at::Tensor pattern = bigbird_pattern(H, N, b, probe.random_blocks);
  if (mask.defined()) pattern = pattern.logical_and(key_pattern(mask));
  expect_matches([&](auto& q, auto& k, auto& v) { return block_sparse_attention(q, k, v, o, mask).out; },
                 [&](auto& q, auto& k, auto& v) { return dense_reference(q, k, v, pattern, 1.0 / std::sqrt(8.0)); },
                 in.q, in.k, in.v, mask);
}

TEST(AttentionBlockSparse, MatchesReferenceNotAMultipleOfTheBlock) {
  at::manual_seed(20);
  check_case(2, 3, 150, 8, 2, {150, 131}, 7);  // nb = 19, last block 6 tokens
  check_case(1, 2, 100, 8, 3, {}, 8);          // (5+2r)b = 88 < 100
  check_case(2, 2, 61, 8, 0, {61, 40}, 9);     // r = 0: window + global only
  check_case(1, 1, 128, 16, 1, {}, 10);        // exact multiple
}

TEST(AttentionBlockSparse, FusedGroupAtEverySimdLevel) {
  // Heads of 8 in float32 take the fused group (blocked_small_head.h), compiled once per level.
  at::manual_seed(21);
  test::for_each_simd_level([&](const char*) {
    check_case(2, 3, 150, 8, 2, {150, 131}, 7);
    check_case(2, 2, 61, 8, 0, {61, 40}, 9);
  });
}

TEST(AttentionBlockSparse, FallsBackToDenseForShortSequences) {
  at::manual_seed(21);
  const auto in = random_qkv(2, 2, 72, 8);
  BlockSparseOptions o;
  o.block = 8;
  o.random_blocks = 2;  // (5 + 2r) b = 72
  const at::Tensor mask = length_mask({72, 50}, 72);
  const auto res = block_sparse_attention(in.q, in.k, in.v, o, mask);
  EXPECT_TRUE(res.dense_fallback);
  EXPECT_EQ(res.random_blocks.sizes(), (at::IntArrayRef{2, 0, 2}));
  EXPECT_EQ(block_sparse_score_elements(2, 2, 72, o), 2 * 2 * 72 * 72);
  expect_matches([&](auto& q, auto& k, auto& v) { return block_sparse_attention(q, k, v, o, mask).out; },
                 [&](auto& q, auto& k, auto& v) {
                   return dense_reference(q, k, v, key_pattern(mask), 1.0 / std::sqrt(8.0));
                 },
                 in.q, in.k, in.v, mask);
  EXPECT_FALSE(block_sparse_uses_dense(73, o));
}

TEST(AttentionBlockSparse, RandomTableExcludesWindowAndGlobalAndIsSeeded) {
  const std::int64_t H = 4, nb = 12, r = 3;
  const at::Tensor t = block_sparse_random_table(H, nb, r, 42);
  ASSERT_EQ(t.sizes(), (at::IntArrayRef{H, nb - 2, r}));
  auto a = t.accessor<std::int64_t, 3>();
  for (std::int64_t h = 0; h < H; ++h)
    for (std::int64_t j = 1; j <= nb - 2; ++j) {
      std::set<std::int64_t> seen;
      for (std::int64_t i = 0; i < r; ++i) {
        const std::int64_t kb = a[h][j - 1][i];
        EXPECT_GE(kb, 1);
        EXPECT_LE(kb, nb - 2);
        EXPECT_GT(std::abs(kb - j), 1);
        seen.insert(kb);
      }
      EXPECT_EQ(static_cast<std::int64_t>(seen.size()), r);
    }
  EXPECT_TRUE(t.equal(block_sparse_random_table(H, nb, r, 42)));
  EXPECT_FALSE(t.equal(block_sparse_random_table(H, nb, r, 43)));
}

TEST(AttentionBlockSparse, ReplaysARecordedTable) {
  at::manual_seed(22);
  const auto in = random_qkv(1, 2, 120, 8);
  BlockSparseOptions o;
  o.block = 8;
  o.random_blocks = 2;
  o.seed = 1;
  const auto first = block_sparse_attention(in.q, in.k, in.v, o);
  BlockSparseOptions other = o;
  other.seed = 99;
  const auto replay = block_sparse_attention(in.q, in.k, in.v, other, {}, first.random_blocks);
  EXPECT_TRUE(replay.random_blocks.equal(first.random_blocks));
  EXPECT_LT(rel_error(replay.out, first.out), 1e-15);
  EXPECT_THROW(block_sparse_attention(in.q, in.k, in.v, o, {}, first.random_blocks.narrow(1, 0, 3)), UserError);
}

TEST(AttentionBlockSparse, ScoreElementsAreSparse) {
  BlockSparseOptions o;  // b = 64, r = 3
  const std::int64_t N = 8192, nb = N / 64;
  EXPECT_EQ(block_sparse_score_elements(1, 1, N, o), (nb - 2) * 64 * 8 * 64 + 2 * 64 * N);
  EXPECT_LT(block_sparse_score_elements(1, 1, N, o), N * N / 10);
}

}  // namespace
}  // namespace lrb
