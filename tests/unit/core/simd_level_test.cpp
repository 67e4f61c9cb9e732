// The one SIMD level of the CPU fast paths (suite/core/simd_level.h).
#include <gtest/gtest.h>

#include <string>

#include "suite/core/errors.h"
#include "suite/core/simd_level.h"

namespace lrb {
namespace {

TEST(SimdLevel, NamesParseBackAndNothingElseDoes) {
  for (SimdLevel level : {SimdLevel::baseline, SimdLevel::avx2, SimdLevel::avx512})
    EXPECT_EQ(parse_simd_level(simd_level_name(level)), level);
  for (const char* other : {"", "AVX2", "sse", "avx", "avx512f", " baseline"}) EXPECT_FALSE(parse_simd_level(other)) << other;
}

TEST(SimdLevel, TheEnvironmentChoosesAtMostTheProcessorsLevel) {
  const SimdLevel most = cpu_simd_level();
  EXPECT_EQ(simd_level_from_environment(nullptr), most);
  EXPECT_EQ(simd_level_from_environment(""), most);
  EXPECT_EQ(simd_level_from_environment("baseline"), SimdLevel::baseline);
  EXPECT_EQ(simd_level_from_environment(simd_level_name(most)), most);
  try {
    simd_level_from_environment("sse4");
    FAIL() << "an unknown level was taken";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("LRB_SIMD_LEVEL=sse4 is not a level: set it to baseline, avx2 or avx512"),
              std::string::npos)
        << e.what();
  }
  if (most == SimdLevel::avx512) GTEST_SKIP() << "this processor runs every level: none is above it";
  EXPECT_THROW(simd_level_from_environment("avx512"), UserError);
}

TEST(SimdLevel, AScopeRunsAtItsLevelAndRestoresTheOneBefore) {
  const SimdLevel before = simd_level();
  const auto levels = available_simd_levels();
  ASSERT_FALSE(levels.empty());
  EXPECT_EQ(levels.front(), SimdLevel::baseline);
  EXPECT_EQ(levels.back(), cpu_simd_level());
  for (SimdLevel level : levels) {
    {
      const ScopedSimdLevel at(level);
      EXPECT_EQ(simd_level(), level);
    }
    EXPECT_EQ(simd_level(), before);
  }
}

}  // namespace
}  // namespace lrb
