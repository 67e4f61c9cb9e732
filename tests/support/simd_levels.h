#pragma once
// Every CPU fast path is tested at each SIMD level this processor runs (suite/core/simd_level.h):
// for_each_simd_level runs a test's body once at each, widest first, under a SCOPED_TRACE
// naming the level, and restores the level after.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "suite/core/simd_level.h"

namespace lrb::test {

inline void for_each_simd_level(const std::function<void(const char* level)>& body) {
  const auto levels = available_simd_levels();
  for (auto it = levels.rbegin(); it != levels.rend(); ++it) {
    const ScopedSimdLevel at(*it);
    SCOPED_TRACE(std::string("SIMD level ") + simd_level_name(*it));
    body(simd_level_name(*it));
  }
}

}  // namespace lrb::test
