// The work queue and progress board under mpirun, without LibTorch
// (tests/programs/work_queue_check.cpp): rank 0 serves from its thread and works too.
#include <gtest/gtest.h>

#include "tests/support/subprocess.h"

namespace lrb {
namespace {

std::vector<std::string> check(int ranks, const std::vector<std::string>& args) {
  auto argv = test::mpirun(ranks);
  argv.push_back(LRB_WORK_QUEUE_CHECK);
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

TEST(MpiWorkQueue, EveryItemIsHandedOutOnceWhileRankZeroServesAndWorks) {
  const auto r = test::run(check(3, {"300"}), std::chrono::seconds(300));
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("300 items over 3 ranks: 300 done, each at most once and every one done (ok 300, stopped 0)"),
            std::string::npos)
      << r.output;
}

TEST(MpiWorkQueue, AStopHandsOutNothingNewAndCountsEveryItemDone) {
  const auto r = test::run(check(3, {"300", "5"}), std::chrono::seconds(300));
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("stopped 1)"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace lrb
