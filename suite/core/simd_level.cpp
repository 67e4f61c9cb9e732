#include "suite/core/simd_level.h"

#include <atomic>
#include <cstdlib>
#include <mutex>

#include "suite/core/cpu_info.h"
#include "suite/core/errors.h"

namespace lrb {
namespace {

constexpr int kUnread = -1;
std::atomic<int> current_level{kUnread};

}  // namespace

const char* simd_level_name(SimdLevel level) {
  switch (level) {
    case SimdLevel::baseline:
      return "baseline";
    case SimdLevel::avx2:
      return "avx2";
    case SimdLevel::avx512:
      return "avx512";
  }
  return "?";
}

std::optional<SimdLevel> parse_simd_level(std::string_view text) {
  for (SimdLevel level : {SimdLevel::baseline, SimdLevel::avx2, SimdLevel::avx512})
    if (text == simd_level_name(level)) return level;
  return std::nullopt;
}

SimdLevel cpu_simd_level() {
#if defined(__x86_64__) && defined(__GNUC__)
  const CpuFlags& f = cpu_flags();
  if (!f.avx2 || !f.fma) return SimdLevel::baseline;
  return f.avx512f ? SimdLevel::avx512 : SimdLevel::avx2;
#else
  return SimdLevel::baseline;
#endif
}

std::vector<SimdLevel> available_simd_levels() {
  std::vector<SimdLevel> levels;
  for (int l = 0; l <= static_cast<int>(cpu_simd_level()); ++l) levels.push_back(static_cast<SimdLevel>(l));
  return levels;
}

SimdLevel simd_level_from_environment(const char* value) {
  const SimdLevel most = cpu_simd_level();
  if (value == nullptr || *value == '\0') return most;
  const std::optional<SimdLevel> asked = parse_simd_level(value);
  if (!asked)
    throw UserError(std::string("LRB_SIMD_LEVEL=") + value +
                    " is not a level: set it to baseline, avx2 or avx512, or unset it for this processor's (" +
                    simd_level_name(most) + ")");
  if (*asked > most)
    throw UserError(std::string("LRB_SIMD_LEVEL=") + value + ", but this processor (or build) runs at most " +
                    simd_level_name(most) + ": ask for that or a lower level");
  return *asked;
}

SimdLevel simd_level() {
  const int level = current_level.load(std::memory_order_relaxed);
  if (level != kUnread) return static_cast<SimdLevel>(level);
  select_simd_level();
  return static_cast<SimdLevel>(current_level.load(std::memory_order_relaxed));
}

void select_simd_level() {
  static std::mutex reading;
  std::lock_guard<std::mutex> lock(reading);
  if (current_level.load() != kUnread) return;
  current_level.store(static_cast<int>(simd_level_from_environment(std::getenv("LRB_SIMD_LEVEL"))));
}

ScopedSimdLevel::ScopedSimdLevel(SimdLevel level) : previous_(simd_level()) {
  LRB_CHECK(level <= cpu_simd_level(),
            std::string("ScopedSimdLevel: ") + simd_level_name(level) + " is above this processor's level");
  current_level.store(static_cast<int>(level));
}

ScopedSimdLevel::~ScopedSimdLevel() { current_level.store(static_cast<int>(previous_)); }

}  // namespace lrb
