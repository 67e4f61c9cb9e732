// StatsEquivalence: the two one-sided tests of `lrbench compare` against statsmodels'
// ttost_paired and SciPy's one-sided t-tests (tests/fixtures/stats/equivalence_fixtures.json,
// written by make_equivalence_fixtures.py).
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "suite/stats/equivalence.h"

namespace lrb::stats {
namespace {

const nlohmann::json& fixtures() {
  static const nlohmann::json j = [] {
    std::ifstream in(std::string(LRB_FIXTURES_DIR) + "/stats/equivalence_fixtures.json");
    if (!in) throw std::runtime_error("cannot open equivalence_fixtures.json");
    return nlohmann::json::parse(in);
  }();
  return j;
}

std::vector<double> vec(const nlohmann::json& j) { return j.get<std::vector<double>>(); }

TEST(StatsEquivalence, PairedDifferencesMatchStatsmodelsTtostPaired) {
  ASSERT_GE(fixtures().at("paired").size(), 8u);
  int unchanged = 0;
  for (const auto& c : fixtures().at("paired")) {
    const Equivalence e = tost_paired(vec(c.at("after")), vec(c.at("before")), c.at("low"), c.at("high"));
    ASSERT_TRUE(e.p_value && e.df) << c.dump();
    EXPECT_NEAR(*e.p_value, c.at("p").get<double>(), 1e-10) << c.dump();
    EXPECT_NEAR(*e.p_lower, c.at("p_lower").get<double>(), 1e-10) << c.dump();
    EXPECT_NEAR(*e.p_upper, c.at("p_upper").get<double>(), 1e-10) << c.dump();
    EXPECT_EQ(*e.df, c.at("df").get<double>());
    unchanged += *e.p_value < 0.05;
  }
  // The fixtures hold both outcomes: a test that always said one would fail here.
  EXPECT_GE(unchanged, 3);
  EXPECT_LE(unchanged, static_cast<int>(fixtures().at("paired").size()) - 3);
}

TEST(StatsEquivalence, RatiosMatchOneSidedTestsOnFiellersPivot) {
  ASSERT_GE(fixtures().at("ratio").size(), 5u);
  for (const auto& c : fixtures().at("ratio")) {
    const Equivalence e = tost_paired_ratio(vec(c.at("after")), vec(c.at("before")), c.at("low"), c.at("high"));
    ASSERT_TRUE(e.p_value) << c.dump();
    EXPECT_NEAR(*e.p_value, c.at("p").get<double>(), 1e-10) << c.dump();
    EXPECT_NEAR(*e.p_lower, c.at("p_lower").get<double>(), 1e-10) << c.dump();
    EXPECT_NEAR(*e.p_upper, c.at("p_upper").get<double>(), 1e-10) << c.dump();
  }
}

TEST(StatsEquivalence, FewSeedsAndNoSpread) {
  // One pair: no spread to test against, nothing claimed.
  EXPECT_FALSE(tost_paired({0.8}, {0.8}, -0.01, 0.01).p_value);
  // Every difference the same (binary fractions: exactly): inside the bounds it is
  // equivalent, outside it is not.
  EXPECT_EQ(*tost_paired({0.75, 0.5}, {0.5, 0.25}, -0.5, 0.5).p_value, 0.0);
  EXPECT_EQ(*tost_paired({0.75, 0.5}, {0.5, 0.25}, -0.125, 0.125).p_value, 1.0);
  // A ratio's pivot A − ρ·B varies with B even when A / B does not: identical sides of a few
  // seeds are within 5 %, a constant ratio of 1.5 is not.
  const std::vector<double> x = {2.0, 2.1, 2.2, 2.3, 2.4, 2.5};
  std::vector<double> slower;
  for (double v : x) slower.push_back(1.5 * v);
  EXPECT_LT(*tost_paired_ratio(x, x, 1 / 1.05, 1.05).p_value, 0.05);
  EXPECT_GT(*tost_paired_ratio(slower, x, 1 / 1.05, 1.05).p_value, 0.5);
}

}  // namespace
}  // namespace lrb::stats
