// StatsMedianUnbiased: the estimate of a claim decided at a look, adjusted for having stopped
// there (suite/stats/group_sequential.h, median_unbiased_drift): its definition checked by
// simulation, and, over simulated studies, the bias of the estimate read at the deciding look
// that it removes.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "suite/stats/group_sequential.h"

namespace lrb::stats {
namespace {

// Four looks at 5, 10, 15 and 20 seeds; two-sided α = 0.05, O'Brien–Fleming spending.
const std::vector<double> kInfo{5, 10, 15, 20};
const std::vector<double>& bounds() {
  static const std::vector<double> z = obrien_fleming_boundary({0.25, 0.5, 0.75, 1.0}, 0.05).z;
  return z;
}

struct Outcome {
  std::size_t stop;
  double z;
};

// One study at `drift` (unit-variance seeds): Z_k = S_k / √I_k, stopping at the first crossing.
Outcome simulate(double drift, std::mt19937_64& rng) {
  std::normal_distribution<double> seed(drift, 1.0);
  double sum = 0, seen = 0;
  for (std::size_t k = 0; k < kInfo.size(); ++k) {
    for (; seen < kInfo[k]; seen += 1) sum += seed(rng);
    const double z = sum / std::sqrt(kInfo[k]);
    if (k + 1 == kInfo.size() || std::fabs(z) >= bounds()[k]) return {k, z};
  }
  return {kInfo.size() - 1, 0};
}

TEST(StatsMedianUnbiased, OneLookIsTheEstimateItself) {
  EXPECT_NEAR(median_unbiased_drift({9.0}, {}, 0, 1.5), 0.5, 1e-6);
  EXPECT_NEAR(median_unbiased_drift({4.0}, {}, 0, -1.0), -0.5, 1e-6);
}

// The definition, by simulation: at the estimate's drift, of the studies that stop at the
// same look the same way, half read a larger Z.
TEST(StatsMedianUnbiased, AtItsDriftHalfTheStudiesStoppingAlikeReadMore) {
  std::mt19937_64 rng(7);
  for (const Outcome observed : {Outcome{1, 3.6}, Outcome{2, 2.9}, Outcome{3, 1.2}, Outcome{1, -3.5}}) {
    const double drift = median_unbiased_drift(kInfo, bounds(), observed.stop, observed.z);
    int alike = 0, more = 0;
    for (int i = 0; i < 400000 && alike < 20000; ++i) {
      const Outcome o = simulate(drift, rng);
      const bool last = observed.stop + 1 == kInfo.size();
      if (o.stop != observed.stop || (!last && (o.z > 0) != (observed.z > 0))) continue;
      ++alike;
      more += observed.z > 0 || last ? o.z >= observed.z : o.z <= observed.z;
    }
    ASSERT_GT(alike, 2000) << "stop at look " << observed.stop + 1;
    EXPECT_NEAR(more / static_cast<double>(alike), 0.5, 0.02) << "stop at look " << observed.stop + 1 << ", z " << observed.z
                                                              << ", drift " << drift;
  }
}

// At a true effect of 0.3 sd a seed, the studies that decide early read the effect far too
// large; adjusted, their estimates lie below the truth as often as above.
TEST(StatsMedianUnbiased, RemovesTheBiasOfDecidingEarly) {
  std::mt19937_64 rng(11);
  const double truth = 0.3;
  int early = 0, adjusted_below = 0, read_below = 0;
  double read_sum = 0;
  for (int i = 0; i < 6000; ++i) {
    const Outcome o = simulate(truth, rng);
    if (o.stop + 1 == kInfo.size() || o.z < 0) continue;
    ++early;
    const double read = o.z / std::sqrt(kInfo[o.stop]);
    read_sum += read;
    read_below += read < truth;
    adjusted_below += median_unbiased_drift(kInfo, bounds(), o.stop, o.z) < truth;
  }
  ASSERT_GT(early, 400);
  EXPECT_GT(read_sum / early, 2.0 * truth) << "deciding early reads the effect too large";
  EXPECT_LT(read_below, early / 20) << "almost never below the truth";
  EXPECT_NEAR(adjusted_below / static_cast<double>(early), 0.5, 0.07) << early << " early studies";
}

}  // namespace
}  // namespace lrb::stats
