// ToMe's bipartite soft matching against a float64 reference written here from ToMe's
// definition (loops over plain arrays, no LibTorch), and MergeOver's unmerge stack.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "suite/nn/token_merging.h"

namespace lrb {
namespace {

using Matrix = std::vector<std::vector<double>>;  // [tokens][channels]

Matrix rows_of(const at::Tensor& t, std::int64_t b) {
  const at::Tensor s = t[b].to(at::kDouble).contiguous();
  Matrix m(static_cast<std::size_t>(s.size(0)), std::vector<double>(static_cast<std::size_t>(s.size(1))));
  for (std::int64_t i = 0; i < s.size(0); ++i)
    for (std::int64_t c = 0; c < s.size(1); ++c) m[i][c] = s[i][c].item<double>();
  return m;
}

struct RefMerge {
  Matrix x;
  std::vector<double> size;
};

// One sample, straight from the definition: A = even positions, B = odd; each A token's
// most similar B token by cosine of the metric; the r A tokens with the highest similarity
// (never the class token) are averaged into their partners, weighted by size; output: kept
// A tokens (by descending similarity, or by position with a class token), then B tokens.
RefMerge reference_merge(const Matrix& x, const Matrix& metric, const std::vector<double>& size, std::int64_t r,
                         bool class_token) {
  const std::size_t T = x.size(), C = x[0].size();
  if (r <= 0) return {x, size};  // ToMe's do_nothing: no merge, no reordering
  auto unit = [](std::vector<double> v) {
    double n = 0;
    for (double e : v) n += e * e;
    n = std::sqrt(n);
    for (double& e : v) e = n > 0 ? e / n : 0;
    return v;
  };
  std::vector<std::size_t> a, b;
  for (std::size_t i = 0; i < T; ++i) (i % 2 == 0 ? a : b).push_back(i);
  r = std::min<std::int64_t>(r, (static_cast<std::int64_t>(T) - (class_token ? 1 : 0)) / 2);
  std::vector<double> best(a.size(), -std::numeric_limits<double>::infinity());
  std::vector<std::size_t> partner(a.size(), 0);
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto ua = unit(metric[a[i]]);
    for (std::size_t j = 0; j < b.size(); ++j) {
      const auto ub = unit(metric[b[j]]);
      double dot = 0;
      for (std::size_t c = 0; c < ua.size(); ++c) dot += ua[c] * ub[c];
      if (dot > best[i]) best[i] = dot, partner[i] = j;
    }
    if (class_token && i == 0) best[i] = -std::numeric_limits<double>::infinity();
  }
  std::vector<std::size_t> order(a.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t p, std::size_t q) { return best[p] > best[q]; });
  std::vector<std::size_t> kept(order.begin() + r, order.end());
  if (class_token) std::sort(kept.begin(), kept.end());
  RefMerge out;
  for (std::size_t i : kept) {
    out.x.push_back(x[a[i]]);
    out.size.push_back(size[a[i]]);
  }
  Matrix sum(b.size(), std::vector<double>(C, 0));
  std::vector<double> mass(b.size(), 0);
  for (std::size_t j = 0; j < b.size(); ++j) {
    for (std::size_t c = 0; c < C; ++c) sum[j][c] = x[b[j]][c] * size[b[j]];
    mass[j] = size[b[j]];
  }
  for (std::int64_t k = 0; k < r; ++k) {
    const std::size_t i = order[static_cast<std::size_t>(k)], j = partner[i];
    for (std::size_t c = 0; c < C; ++c) sum[j][c] += x[a[i]][c] * size[a[i]];
    mass[j] += size[a[i]];
  }
  for (std::size_t j = 0; j < b.size(); ++j) {
    for (double& v : sum[j]) v /= mass[j];
    out.x.push_back(sum[j]);
    out.size.push_back(mass[j]);
  }
  return out;
}

struct Case {
  std::int64_t tokens, r;
  bool class_token;
};

class MergeReference : public ::testing::TestWithParam<Case> {};

TEST_P(MergeReference, MatchesTheDefinitionInFloat64) {
  const Case c = GetParam();
  at::manual_seed(11);
  const std::int64_t B = 3, C = 5, Cm = 4;
  const at::Tensor x = at::randn({B, c.tokens, C}, at::kDouble);
  const at::Tensor metric = at::randn({B, c.tokens, Cm}, at::kDouble);
  const at::Tensor size = at::randint(1, 4, {B, c.tokens, 1}, at::kDouble);
  const TokenMatch m = bipartite_soft_matching(metric, c.r, c.class_token);
  const MergedTokens got = merge_weighted(m, x, size);
  const std::int64_t limit = (c.tokens - (c.class_token ? 1 : 0)) / 2;
  EXPECT_EQ(m.r, std::min(c.r, limit));
  ASSERT_EQ(got.x.size(1), c.tokens - m.r);
  for (std::int64_t b = 0; b < B; ++b) {
    std::vector<double> s;
    for (std::int64_t t = 0; t < c.tokens; ++t) s.push_back(size[b][t][0].item<double>());
    const RefMerge ref = reference_merge(rows_of(x, b), rows_of(metric, b), s, c.r, c.class_token);
    ASSERT_EQ(static_cast<std::int64_t>(ref.x.size()), got.x.size(1));
    const Matrix gx = rows_of(got.x, b);
    for (std::size_t t = 0; t < ref.x.size(); ++t) {
      EXPECT_DOUBLE_EQ(got.size[b][static_cast<std::int64_t>(t)][0].item<double>(), ref.size[t]) << "token " << t;
      for (std::size_t ch = 0; ch < ref.x[t].size(); ++ch) EXPECT_NEAR(gx[t][ch], ref.x[t][ch], 1e-12) << "token " << t;
    }
  }
  // Sizes add up to the tokens' total; with a class token it survives first, alone.
  EXPECT_TRUE(at::allclose(got.size.sum({1, 2}), size.sum({1, 2})));
  if (c.class_token) {
    EXPECT_TRUE(at::allclose(got.x.select(1, 0), x.select(1, 0), 1e-14, 0));  // x * s / s, as ToMe computes it
    EXPECT_TRUE(at::equal(got.size.select(1, 0), size.select(1, 0)));
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, MergeReference,
                         ::testing::Values(Case{16, 5, false}, Case{17, 8, false}, Case{17, 8, true}, Case{16, 7, true},
                                           Case{9, 100, false}, Case{9, 100, true}, Case{2, 1, false}, Case{64, 16, true},
                                           Case{8, 0, false}));

TEST(TokenMerging, SizesSumToTheTokenCountThroughRepeatedMerges) {
  at::manual_seed(3);
  at::Tensor x = at::randn({2, 50, 6});
  at::Tensor size;
  MergeStack stack;
  for (std::int64_t r : {10, 7, 5}) {
    const MergedTokens m = stack.merge(bipartite_soft_matching(x, r, true), x, size);
    x = m.x;
    size = m.size;
  }
  EXPECT_EQ(x.size(1), 50 - 22);
  EXPECT_TRUE(at::equal(size.sum({1, 2}), at::full({2}, 50.0)));
  EXPECT_EQ(size[0][0][0].item<double>(), 1.0);  // the class token never absorbed anything
}

TEST(TokenMerging, UnmergeDuplicateThenRemergeIsTheIdentity) {
  at::manual_seed(5);
  const at::Tensor x = at::randn({2, 21, 4}, at::kDouble), metric = at::randn({2, 21, 3}, at::kDouble);
  for (bool cls : {false, true}) {
    const TokenMatch m = bipartite_soft_matching(metric, 8, cls);
    const MergedTokens merged = merge_weighted(m, x);
    const at::Tensor back = unmerge_tokens(m, merged.x);
    ASSERT_EQ(back.sizes(), x.sizes());
    const MergedTokens again = merge_weighted(m, back);
    EXPECT_TRUE(at::allclose(again.x, merged.x, 0, 1e-14));
    EXPECT_TRUE(at::equal(again.size, merged.size));
    // Every position holds the merged token it went into.
    const at::Tensor vac = vacated_positions(m);
    EXPECT_EQ(vac.sum().item<std::int64_t>(), 2 * 8);
  }
}

TEST(TokenMerging, ExactRestoresTheInputThroughSeveralLevels) {
  at::manual_seed(9);
  const at::Tensor x = at::randn({3, 40, 5});
  MergeStack stack(/*keep_inputs=*/true);
  at::Tensor y = x, size;
  for (std::int64_t r : {12, 9, 4}) {
    const MergedTokens m = stack.merge(bipartite_soft_matching(y, r), y, size);
    y = m.x;
    size = m.size;
  }
  EXPECT_TRUE(at::equal(stack.unmerge(y, UnmergeMode::Exact), x));
  EXPECT_TRUE(stack.empty());
}

TEST(TokenMerging, ExactKeepsEachTokenAndAddsItsMergedTokensChange) {
  at::manual_seed(10);
  const at::Tensor x = at::randn({2, 12, 3});
  MergeStack stack(true);
  const TokenMatch m = bipartite_soft_matching(x, 4);
  const TokenMatch copy = m;
  const MergedTokens merged = stack.merge(m, x, {});
  const at::Tensor delta = at::randn(merged.x.sizes());
  const at::Tensor got = stack.unmerge(merged.x + delta, UnmergeMode::Exact);
  EXPECT_TRUE(at::allclose(got, x + unmerge_tokens(copy, delta)));
}

TEST(TokenMerging, ZeroAndDuplicateDifferOnlyAtVacatedPositions) {
  at::manual_seed(12);
  const at::Tensor x = at::randn({2, 30, 4});
  at::Tensor vac_expected;
  auto run = [&](UnmergeMode mode) {
    MergeStack stack;
    at::Tensor y = x, size;
    at::Tensor vac = at::zeros({2, 30}, at::kBool);
    std::vector<TokenMatch> matches;
    for (std::int64_t r : {8, 5}) {
      matches.push_back(bipartite_soft_matching(y, r));
      const MergedTokens m = stack.merge(matches.back(), y, size);
      y = m.x;
      size = m.size;
    }
    // Positions vacated at either level, traced back to the 30 original positions.
    vac_expected = unmerge_tokens(matches[0], vacated_positions(matches[1]).unsqueeze(-1).to(at::kFloat)).squeeze(-1).gt(0.5)
                       .logical_or(vacated_positions(matches[0]));
    return stack.unmerge(y, mode, {5, 6});
  };
  const at::Tensor dup = run(UnmergeMode::Duplicate), zero = run(UnmergeMode::Zero);
  const at::Tensor vac = vac_expected.unsqueeze(-1).expand_as(dup);
  // 13 tokens vacated per sample, more positions when a vacated token held several.
  EXPECT_GE(vac_expected.sum().item<std::int64_t>(), 2 * 13);
  EXPECT_TRUE(zero.masked_select(vac).eq(0).all().item<bool>());
  EXPECT_TRUE(at::equal(zero.masked_select(vac.logical_not()), dup.masked_select(vac.logical_not())));
}

TEST(TokenMerging, NeighbourMeanTakesTheNearestSurvivorsOnTheGrid) {
  // A 3x3 grid, one sample, one channel holding each position's index; the centre and a
  // corner are vacated. The corner (0,0) has survivors (0,1) and (1,0) at distance 1; the
  // centre (1,1) has (0,1), (1,0), (1,2), (2,1).
  at::Tensor x = at::arange(9, at::kDouble).view({1, 9, 1});
  at::Tensor vac = at::zeros({1, 9}, at::kBool);
  vac[0][0] = true;
  vac[0][4] = true;
  const at::Tensor got = fill_from_nearest(x, vac, {3, 3});
  EXPECT_DOUBLE_EQ(got[0][0][0].item<double>(), (1 + 3) / 2.0);
  EXPECT_DOUBLE_EQ(got[0][4][0].item<double>(), (1 + 3 + 5 + 7) / 4.0);
  EXPECT_DOUBLE_EQ(got[0][8][0].item<double>(), 8.0);
  // 1-D, with a class token in front that is not on the grid: position 3 of 0..5 vacated
  // with 2 and 4 gone too; nearest survivors are 1 and 5 (distance 2).
  at::Tensor seq = at::cat({at::full({1, 1, 1}, 100.0, at::kDouble), at::arange(6, at::kDouble).view({1, 6, 1})}, 1);
  at::Tensor v1 = at::zeros({1, 7}, at::kBool);
  v1[0][3] = v1[0][4] = v1[0][5] = true;  // grid positions 2, 3, 4
  const at::Tensor g1 = fill_from_nearest(seq, v1, {6}, 1);
  EXPECT_DOUBLE_EQ(g1[0][0][0].item<double>(), 100.0);
  EXPECT_DOUBLE_EQ(g1[0][3][0].item<double>(), 1.0);        // grid 2: nearest survivor 1
  EXPECT_DOUBLE_EQ(g1[0][4][0].item<double>(), (1 + 5) / 2.0);  // grid 3: 1 and 5
  EXPECT_DOUBLE_EQ(g1[0][5][0].item<double>(), 5.0);        // grid 4: 5
}

TEST(TokenMerging, DuplicateUnmergeGivesEveryPositionTheTokenItEndedIn) {
  at::manual_seed(21);
  const at::Tensor x = at::randn({2, 24, 3}, at::kDouble);
  MergeStack stack;
  at::Tensor y = x, size;
  // Source tracking as ToMe's merge_source: which original positions each token holds.
  at::Tensor source = at::eye(24, at::kDouble).unsqueeze(0).expand({2, 24, 24});
  for (std::int64_t r : {6, 6, 3}) {
    const TokenMatch m = bipartite_soft_matching(y, r);
    source = merge_weighted(m, source, size).x.gt(0).to(at::kDouble);  // any positive weight = holds it
    const MergedTokens merged = stack.merge(m, y, size);
    y = merged.x;
    size = merged.size;
  }
  const at::Tensor back = stack.unmerge(y, UnmergeMode::Duplicate);
  // Position p gets the final token whose source row contains p.
  const at::Tensor owner = source.argmax(1);  // [B, 24]: the token holding each position
  const at::Tensor expected = y.gather(1, owner.unsqueeze(-1).expand({2, 24, 3}));
  EXPECT_TRUE(at::equal(back, expected));
}

}  // namespace
}  // namespace lrb
