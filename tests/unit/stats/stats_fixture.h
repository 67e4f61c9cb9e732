#pragma once
// Shared helpers for the Stats* tests: the SciPy/statsmodels vectors of
// tests/fixtures/stats/stats_fixtures.json (written by make_stats_fixtures.py).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "suite/stats/paired.h"
#include "suite/stats/sample_stats.h"

namespace lrb::stats::testing {

inline const nlohmann::json& fixtures() {
  static const nlohmann::json j = [] {
    std::ifstream in(std::string(LRB_FIXTURES_DIR) + "/stats/stats_fixtures.json");
    if (!in) throw std::runtime_error("cannot open stats_fixtures.json");
    return nlohmann::json::parse(in);
  }();
  return j;
}

inline std::vector<double> vec(const nlohmann::json& j) { return j.get<std::vector<double>>(); }

inline SeedValues seed_map(const nlohmann::json& j) {
  SeedValues m;
  for (auto it = j.begin(); it != j.end(); ++it) m[std::stoll(it.key())] = it.value().get<double>();
  return m;
}

// Within 1e-9 relative, with an absolute floor for values near 0.
inline ::testing::AssertionResult close(double actual, double expected, double rel = 1e-9, double abs = 1e-12) {
  if (std::fabs(actual - expected) <= abs + rel * std::fabs(expected)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "actual " << actual << " vs expected " << expected << " (diff "
                                       << actual - expected << ")";
}

inline ::testing::AssertionResult close(const std::optional<double>& actual, double expected, double rel = 1e-9,
                                        double abs = 1e-12) {
  if (!actual) return ::testing::AssertionFailure() << "value absent, expected " << expected;
  return close(*actual, expected, rel, abs);
}

inline ::testing::AssertionResult close(const std::optional<Interval>& actual, const nlohmann::json& expected,
                                        double rel = 1e-9, double abs = 1e-12) {
  if (!actual) return ::testing::AssertionFailure() << "interval absent";
  auto lo = close(actual->lo, expected[0].get<double>(), rel, abs);
  if (!lo) return lo << " (lower end)";
  auto hi = close(actual->hi, expected[1].get<double>(), rel, abs);
  if (!hi) return hi << " (upper end)";
  return ::testing::AssertionSuccess();
}

}  // namespace lrb::stats::testing
