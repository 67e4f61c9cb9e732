// lrb::philox_blocks against LibTorch's at::philox_engine drawn one value at a time: the
// same values in the same order, in the AVX2 code and the baseline, across a carry of the
// counter's low word and at every count of blocks left over after the groups of eight.
#include <gtest/gtest.h>

#include <ATen/core/PhiloxRNGEngine.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "suite/core/simd_level.h"
#include "suite/nn/cpu/philox_blocks.h"

namespace lrb {
namespace {

std::vector<std::uint32_t> engine_draws(std::uint64_t key, std::uint64_t first_block, std::int64_t blocks) {
  at::philox_engine engine(key, 0, first_block);
  std::vector<std::uint32_t> v(static_cast<std::size_t>(4 * blocks));
  for (auto& x : v) x = engine();
  return v;
}

class PhiloxBlocks : public ::testing::TestWithParam<SimdLevel> {
 protected:
  void SetUp() override {
    if (GetParam() > cpu_simd_level()) GTEST_SKIP() << "this processor runs at most " << simd_level_name(cpu_simd_level());
    at_.emplace(GetParam());
  }
  void TearDown() override { at_.reset(); }
  std::optional<ScopedSimdLevel> at_;
};

TEST_P(PhiloxBlocks, DrawWhatTheEngineDrawsInOrder) {
  const std::uint64_t keys[] = {0, 1, 0x0123456789abcdefULL, ~0ULL};
  // 0xfffffffa: the group of eight crosses the counter's 32-bit low word into its high word.
  const std::uint64_t firsts[] = {0, 5, 0xfffffffaULL, 0x1234567800000000ULL, ~0ULL - 20};
  for (const std::uint64_t key : keys)
    for (const std::uint64_t first : firsts)
      for (const std::int64_t blocks : {0, 1, 7, 8, 9, 16, 19, 100}) {
        std::vector<std::uint32_t> got(static_cast<std::size_t>(4 * blocks) + 1, 0xdeadbeef);
        philox_blocks(key, first, blocks, got.data());
        EXPECT_EQ(got.back(), 0xdeadbeefu) << "wrote past 4 * blocks";
        got.pop_back();
        EXPECT_EQ(got, engine_draws(key, first, blocks)) << "key " << key << ", first block " << first << ", " << blocks
                                                         << " blocks";
      }
}

INSTANTIATE_TEST_SUITE_P(Level, PhiloxBlocks, ::testing::Values(SimdLevel::baseline, SimdLevel::avx2),
                         [](const auto& info) { return std::string(simd_level_name(info.param)); });

}  // namespace
}  // namespace lrb
