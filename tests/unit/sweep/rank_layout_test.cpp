// `lrbench run --ranks auto`'s layout (suite/sweep/rank_layout.h): one rank per physical
// core, never more groups than runs left, whole data-parallel groups, threads sharing the
// hardware threads, and a thread count of the user's kept.
#include <gtest/gtest.h>

#include "suite/sweep/rank_layout.h"

namespace lrb {
namespace {

void expect_layout(const RankLayout& got, int ranks, int threads) {
  EXPECT_EQ(got.ranks, ranks) << got.why;
  EXPECT_EQ(got.threads, threads) << got.why;
}

TEST(RankLayout, OneRankPerCoreWhileThereAreRunsForThem) {
  expect_layout(auto_rank_layout(2, 2, 15, 1), 2, 1);    // the quickstart on this kind of machine
  expect_layout(auto_rank_layout(16, 16, 100, 1), 16, 1);
  expect_layout(auto_rank_layout(1, 1, 15, 1), 1, 1);
}

TEST(RankLayout, FewerRunsThanCoresGiveTheRestAsThreads) {
  expect_layout(auto_rank_layout(2, 2, 1, 1), 1, 2);
  expect_layout(auto_rank_layout(16, 16, 3, 1), 3, 5);
  expect_layout(auto_rank_layout(8, 8, 0, 1), 1, 8);  // nothing left: one rank, to say so
}

TEST(RankLayout, HardwareThreadsOfACoreAreThreadsOfItsRank) {
  expect_layout(auto_rank_layout(4, 8, 100, 1), 4, 2);
  expect_layout(auto_rank_layout(4, 8, 2, 1), 2, 4);
}

TEST(RankLayout, DataParallelGroupsAreWhole) {
  expect_layout(auto_rank_layout(8, 8, 100, 2), 8, 1);
  expect_layout(auto_rank_layout(7, 7, 100, 2), 6, 1);
  expect_layout(auto_rank_layout(8, 8, 1, 2), 2, 4);  // one run: one group
  expect_layout(auto_rank_layout(2, 2, 5, 4), 4, 1);  // a group larger than the machine still runs, oversubscribed
}

TEST(RankLayout, AThreadCountOfTheUsersIsKept) {
  expect_layout(auto_rank_layout(8, 8, 100, 1, 2), 4, 2);
  expect_layout(auto_rank_layout(4, 8, 100, 1, 2), 4, 2);
  expect_layout(auto_rank_layout(2, 2, 100, 1, 8), 1, 8);  // more threads than cores: one rank
  expect_layout(auto_rank_layout(8, 8, 1, 1, 2), 1, 2);
}

TEST(RankLayout, TheLineSaysWhatItWasChosenFrom) {
  const RankLayout l = auto_rank_layout(4, 8, 3, 1);
  EXPECT_EQ(l.why, "3 rank(s) x 2 thread(s): 4 core(s), 8 hardware thread(s), 3 run(s) left");
}

}  // namespace
}  // namespace lrb
