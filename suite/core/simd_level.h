#pragma once
// The one instruction-set level the CPU fast paths (suite/nn/cpu/) run at, chosen in one
// place: the widest this processor runs, or LRB_SIMD_LEVEL's (baseline, avx2, avx512) where
// the environment names one. Every fast path asks simd_level() and nothing else, so a test,
// a benchmark or a user who suspects a kernel can run every path at any level the machine has.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lrb {

// Ordered: a level runs every copy a lower one does. avx2 means AVX2 and FMA; avx512 adds
// AVX-512F (the 16-float copies).
enum class SimdLevel { baseline = 0, avx2 = 1, avx512 = 2 };

const char* simd_level_name(SimdLevel level);
std::optional<SimdLevel> parse_simd_level(std::string_view text);

// The widest level this processor and this build run (baseline where the build has no x86
// vector copies).
SimdLevel cpu_simd_level();
// The levels from baseline up to cpu_simd_level(): those a test runs each fast path at.
std::vector<SimdLevel> available_simd_levels();

// The level LRB_SIMD_LEVEL (unset or empty: cpu_simd_level()) asks for. UserError for a name
// that is not a level or a level above this processor's, saying which it runs.
SimdLevel simd_level_from_environment(const char* value);

// The level the fast paths take now. The first call reads LRB_SIMD_LEVEL (programs call
// select_simd_level() at start-up, so a bad value stops them there, exit 2).
SimdLevel simd_level();
void select_simd_level();

// For tests and benchmarks: run at `level` (at most cpu_simd_level(), else an invariant
// fails) until the scope ends.
class ScopedSimdLevel {
 public:
  explicit ScopedSimdLevel(SimdLevel level);
  ~ScopedSimdLevel();
  ScopedSimdLevel(const ScopedSimdLevel&) = delete;
  ScopedSimdLevel& operator=(const ScopedSimdLevel&) = delete;

 private:
  SimdLevel previous_;
};

}  // namespace lrb
