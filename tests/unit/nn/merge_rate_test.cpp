// MergeOver's merge-rate rule: (N - r) divisible by g = lcm(g1, g2), N - r >= g,
// r <= floor(N / 2); a requested count moves up to the next valid r.
#include <gtest/gtest.h>

#include "suite/nn/merge_rate.h"

namespace lrb {
namespace {

TEST(MergeRate, ThePapersStageLengthsAtRhoQuarter) {
  // 28x28, 14x14 and 7x7 grids with g = 8, 8, 1: floor(rho N) = 196, 49, 12.
  EXPECT_EQ(784 - stage_merge_count(784, 0.25, slice_multiple(8, 2)), 584);
  EXPECT_EQ(196 - stage_merge_count(196, 0.25, 8), 144);
  EXPECT_EQ(49 - stage_merge_count(49, 0.25, slice_multiple(1, 1)), 37);
  // SReT-T's own second stage (groups 4 and 1: g = 4) lands on the same length.
  EXPECT_EQ(196 - stage_merge_count(196, 0.25, slice_multiple(4, 1)), 144);
}

struct Row {
  std::int64_t n, g1, g2, requested, expected;
};

TEST(MergeRate, TableOfCases) {
  const Row rows[] = {
      {784, 8, 2, 196, 200},  // 588 % 8 = 4 -> up to 200 (584)
      {196, 4, 1, 49, 52},    // 147, 146, 145 not multiples of 4 -> 52 (144)
      {196, 4, 2, 52, 52},    // already valid
      {49, 1, 1, 12, 12},     // g = 1: any r up to 24
      {49, 1, 1, 30, 24},     // above the limit floor(49/2): the largest valid below
      {49, 7, 1, 12, 14},     // g = 7: 37 no -> 35 = 49 - 14
      {16, 4, 2, 3, 4},       // lcm 4: 13 no -> 12
      {16, 4, 2, 7, 8},       // 9, 8: 8 is a multiple of 4 and r = 8 <= 8
      {16, 4, 2, 9, 8},       // above the limit
      {12, 4, 4, 5, 4},       // 7, 6 fail and 6 is the limit -> down to 4 (8)
      {8, 8, 1, 3, 0},        // N - r >= 8 leaves only r = 0
      {24, 6, 4, 1, 12},      // lcm 12: only 12 (N - r = 12 >= 12)
      {24, 3, 2, 5, 6},       // lcm 6: 19 no, 18 yes
      {64, 2, 2, 0, 0},       // nothing asked, nothing merged
      {6, 2, 3, 2, 0},        // lcm 6: N - r >= 6 leaves only 0
  };
  for (const Row& row : rows) {
    const std::int64_t g = slice_multiple(row.g1, row.g2);
    const std::int64_t r = merge_count(row.n, row.requested, g);
    EXPECT_EQ(r, row.expected) << "N=" << row.n << " g1=" << row.g1 << " g2=" << row.g2 << " requested " << row.requested;
    EXPECT_TRUE(valid_merge_count(row.n, r, g));
    EXPECT_EQ((row.n - r) % g, 0);
    EXPECT_GE(row.n - r, g);
    EXPECT_LE(r, row.n / 2);
  }
}

TEST(MergeRate, ValidityItself) {
  EXPECT_TRUE(valid_merge_count(784, 200, 8));
  EXPECT_FALSE(valid_merge_count(784, 196, 8));   // 588 % 8 != 0
  EXPECT_FALSE(valid_merge_count(20, 11, 1));     // beyond floor(N / 2)
  EXPECT_FALSE(valid_merge_count(16, 8, 16));     // fewer than g tokens left
  EXPECT_EQ(slice_multiple(8, 2), 8);
  EXPECT_EQ(slice_multiple(4, 6), 12);
}

}  // namespace
}  // namespace lrb
