// ParallelFor*: suite/core/parallel_for.h runs independent pieces of work on every core;
// each piece writes only its own slot, and an exception comes back to the caller.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <vector>

#include "suite/core/parallel_for.h"

namespace lrb {
namespace {

TEST(ParallelFor, EveryIndexRunsExactlyOnce) {
  for (const std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{1000}}) {
    std::vector<std::atomic<int>> runs(count);
    parallel_for(count, [&](std::size_t i) { ++runs[i]; });
    for (std::size_t i = 0; i < count; ++i) EXPECT_EQ(runs[i].load(), 1) << i;
  }
}

// The lowest index's exception, whichever thread met it first, and only once every piece
// has finished (no piece still writing into the caller's results).
TEST(ParallelFor, TheLowestFailingIndexIsRethrownAfterAllFinish) {
  std::atomic<int> finished{0};
  try {
    parallel_for(64, [&](std::size_t i) {
      if (i == 50 || i == 13) throw std::runtime_error("piece " + std::to_string(i));
      ++finished;
    });
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "piece 13");
  }
  EXPECT_EQ(finished.load(), 62);
}

}  // namespace
}  // namespace lrb
