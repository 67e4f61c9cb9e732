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

TEST(StatsProportion, WilsonAndClopperPearsonMatchStatsmodels) {
  ASSERT_GE(cases().size(), 10u);
  using Method = std::optional<Interval> (*)(std::size_t, std::size_t, double);
  for (const auto& [name, method] : {std::pair<const char*, Method>{"wilson", &wilson_interval}, {"clopper_pearson", &clopper_pearson_interval}})
    for (const auto& c : cases()) {
      const auto i = method(c.at("k"), c.at("n"), c.at("confidence"));
      ASSERT_TRUE(i) << name << " " << c.dump();
      EXPECT_NEAR(i->lo, c.at(name)[0].get<double>(), 1e-10) << name << " " << c.dump();
      EXPECT_NEAR(i->hi, c.at(name)[1].get<double>(), 1e-10) << name << " " << c.dump();
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
