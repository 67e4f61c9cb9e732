// StatsProportion: the share of runs that reached a target, with Wilson's and the
// Clopper–Pearson interval, against statsmodels' proportion_confint
// (tests/fixtures/stats/proportion_fixtures.json, written by make_proportion_fixtures.py).
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "suite/stats/proportion.h"

namespace lrb::stats {
namespace {

const nlohmann::json& cases() {
  static const nlohmann::json j = [] {
    std::ifstream in(std::string(LRB_FIXTURES_DIR) + "/stats/proportion_fixtures.json");
    if (!in) throw std::runtime_error("cannot open proportion_fixtures.json");
    return nlohmann::json::parse(in).at("cases");
  }();
  return j;
}

TEST(StatsProportion, WilsonMatchesStatsmodels) {
  ASSERT_GE(cases().size(), 10u);
  for (const auto& c : cases()) {
    const auto i = wilson_interval(c.at("k"), c.at("n"), c.at("confidence"));
    ASSERT_TRUE(i) << c.dump();
    EXPECT_NEAR(i->lo, c.at("wilson")[0].get<double>(), 1e-12) << c.dump();
    EXPECT_NEAR(i->hi, c.at("wilson")[1].get<double>(), 1e-12) << c.dump();
  }
}

TEST(StatsProportion, ClopperPearsonMatchesStatsmodels) {
  for (const auto& c : cases()) {
    const auto i = clopper_pearson_interval(c.at("k"), c.at("n"), c.at("confidence"));
    ASSERT_TRUE(i) << c.dump();
    EXPECT_NEAR(i->lo, c.at("clopper_pearson")[0].get<double>(), 1e-10) << c.dump();
    EXPECT_NEAR(i->hi, c.at("clopper_pearson")[1].get<double>(), 1e-10) << c.dump();
  }
}

TEST(StatsProportion, NoRunsNoShare) {
  EXPECT_FALSE(wilson_interval(0, 0));
  EXPECT_FALSE(clopper_pearson_interval(0, 0));
  EXPECT_FALSE(wilson_interval(3, 2));
  // Every run reached it: the exact interval ends at 1, Wilson's below it but near.
  EXPECT_EQ(clopper_pearson_interval(5, 5)->hi, 1.0);
  EXPECT_LT(wilson_interval(5, 5)->lo, 1.0);
}

}  // namespace
}  // namespace lrb::stats
