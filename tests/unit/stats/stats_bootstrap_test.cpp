#include <gtest/gtest.h>

#include "stats_fixture.h"
#include "suite/stats/bootstrap.h"

namespace lrb::stats {
namespace {

using testing::close;
using testing::fixtures;
using testing::vec;

ResampleSet decode(const nlohmann::json& rows, std::size_t n) {
  ResampleSet set;
  set.n = n;
  set.count = rows.size();
  for (const auto& row : rows) {
    const std::string s = row;
    EXPECT_EQ(s.size(), n);
    for (char c : s) set.indices.push_back(static_cast<std::uint32_t>(c - '0'));
  }
  return set;
}

// The fixture's resamples are the very ones scipy.stats.bootstrap draws from
// default_rng(seed); the expected intervals come from the script's NumPy transcription of
// SciPy's percentile and BCa code (checked there against scipy.stats.bootstrap itself).
TEST(StatsBootstrap, FixedResamplesMatchScipyFormulas) {
  for (const auto& c : fixtures()["bootstrap_fixed"]) {
    const std::string name = c["name"];
    SCOPED_TRACE(name);
    const auto x = vec(c["values"]);
    const BootstrapInterval r = bootstrap_mean(x, decode(c["indices"], x.size()), c["confidence"].get<double>());
    EXPECT_FALSE(r.seed);
    EXPECT_EQ(r.resamples, c["indices"].size());
    EXPECT_TRUE(close(r.percentile, c["percentile"]));
    EXPECT_TRUE(close(r.bca, c["bca"]));
    EXPECT_TRUE(close(r.bias_correction, c["z0"].get<double>()));
    EXPECT_TRUE(close(r.acceleration, c["a"].get<double>()));
    EXPECT_TRUE(close(r.std_error, c["std_error"].get<double>()));
  }
}

// Our own resamples (lrb::Rng) against scipy.stats.bootstrap: the fixture holds the mean
// and Monte-Carlo spread of SciPy's endpoints over 30 seeds of 10,000 resamples each.
TEST(StatsBootstrap, OwnResamplesAgreeWithScipyWithinMonteCarloError) {
  for (const auto& c : fixtures()["bootstrap_mc"]) {
    const std::string name = c["name"];
    SCOPED_TRACE(name);
    const auto x = vec(c["values"]);
    BootstrapSettings s;
    s.resamples = c["resamples"];
    const BootstrapInterval r = bootstrap_mean(x, s);
    ASSERT_TRUE(r.percentile && r.bca);
    const double runs = c["scipy_runs"];
    auto check = [&](const Interval& got, const std::string& key) {
      const auto mean = vec(c[key + "_mean"]);
      const auto sd = vec(c[key + "_mc_sd"]);
      // One draw of ours against the average of `runs` draws of SciPy's: 5 standard errors.
      const double k = 5.0 * std::sqrt(1.0 + 1.0 / runs);
      EXPECT_NEAR(got.lo, mean[0], k * sd[0]) << key;
      EXPECT_NEAR(got.hi, mean[1], k * sd[1]) << key;
    };
    check(*r.percentile, "percentile");
    check(*r.bca, "bca");
  }
}

TEST(StatsBootstrap, SeedIsRecordedAndReproducible) {
  const std::vector<double> x{0.71, 0.74, 0.69, 0.77, 0.73, 0.70, 0.72, 0.75, 0.68, 0.76};
  BootstrapSettings s;
  s.seed = 99;
  s.resamples = 2000;
  const BootstrapInterval a = bootstrap_mean(x, s);
  const BootstrapInterval b = bootstrap_mean(x, s);
  EXPECT_EQ(a.seed, 99u);
  EXPECT_EQ(a.resamples, 2000u);
  EXPECT_EQ(a.bca->lo, b.bca->lo);
  EXPECT_EQ(a.bca->hi, b.bca->hi);
  s.seed = 100;
  const BootstrapInterval c = bootstrap_mean(x, s);
  EXPECT_NE(*a.std_error, *c.std_error);
}

TEST(StatsBootstrap, DrawnIndicesAreInRange) {
  const ResampleSet set = draw_resamples(7, 500, 3);
  ASSERT_EQ(set.indices.size(), 3500u);
  std::vector<int> seen(7, 0);
  for (auto i : set.indices) {
    ASSERT_LT(i, 7u);
    seen[i]++;
  }
  for (int c : seen) EXPECT_GT(c, 400);
}

TEST(StatsBootstrap, TooFewValuesGiveNoInterval) {
  EXPECT_FALSE(bootstrap_mean(std::vector<double>{0.5}).percentile);
  EXPECT_FALSE(bootstrap_mean(std::vector<double>{}).bca);
}

void expect_same(const std::optional<Interval>& a, const std::optional<Interval>& b) {
  ASSERT_EQ(a.has_value(), b.has_value());
  if (a) {
    EXPECT_EQ(a->lo, b->lo);
    EXPECT_EQ(a->hi, b->hi);
  }
}

// Many samples at once (sizes shared and not, a constant one, resamples in no round number
// of blocks) give each sample's own bootstrap to the last bit.
TEST(StatsBootstrap, ManyAtOnceEqualOneAtATime) {
  std::vector<std::vector<double>> samples;
  std::uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(state >> 11) * 0x1.0p-53;
  };
  for (std::size_t n : {0, 1, 2, 3, 5, 5, 5, 7, 40, 40, 300}) {
    std::vector<double> x(n);
    for (double& v : x) v = 0.6 + 0.2 * next();
    samples.push_back(std::move(x));
  }
  samples.push_back(std::vector<double>(6, 0.25));
  BootstrapSettings s;
  s.resamples = 1003;
  s.seed = 7;
  const std::vector<BootstrapInterval> many = bootstrap_means(samples, s);
  ASSERT_EQ(many.size(), samples.size());
  for (std::size_t k = 0; k < samples.size(); ++k) {
    SCOPED_TRACE("sample " + std::to_string(k) + " of size " + std::to_string(samples[k].size()));
    const BootstrapInterval one = bootstrap_mean(samples[k], s);
    EXPECT_EQ(many[k].n, one.n);
    EXPECT_EQ(many[k].resamples, one.resamples);
    EXPECT_EQ(many[k].seed, one.seed);
    EXPECT_EQ(many[k].confidence, one.confidence);
    expect_same(many[k].percentile, one.percentile);
    expect_same(many[k].bca, one.bca);
    EXPECT_EQ(many[k].bias_correction, one.bias_correction);
    EXPECT_EQ(many[k].acceleration, one.acceleration);
    EXPECT_EQ(many[k].std_error, one.std_error);
  }
}

}  // namespace
}  // namespace lrb::stats
