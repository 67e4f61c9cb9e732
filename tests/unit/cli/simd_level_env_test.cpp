// LRB_SIMD_LEVEL is read once when lrbench starts: a bad value stops every command there.
#include <gtest/gtest.h>

#include <string>

#include "suite/core/exit_codes.h"
#include "tests/support/subprocess.h"

namespace lrb {
namespace {

TEST(SimdLevelEnvironment, ABadLevelStopsLrbenchAtStartUpWithExit2) {
  const auto bad = test::run({test::lrbench(), "list"}, std::chrono::seconds(60), {"LRB_SIMD_LEVEL=sse4"});
  EXPECT_EQ(bad.code, kExitUsage) << bad.output;
  EXPECT_NE(bad.output.find("LRB_SIMD_LEVEL=sse4 is not a level: set it to baseline, avx2 or avx512"), std::string::npos)
      << bad.output;
  const auto baseline = test::run({test::lrbench(), "list"}, std::chrono::seconds(60), {"LRB_SIMD_LEVEL=baseline"});
  EXPECT_EQ(baseline.code, kExitDone) << baseline.output;
}

}  // namespace
}  // namespace lrb
