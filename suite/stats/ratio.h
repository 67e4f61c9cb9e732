#pragma once
// The ratio of two means, mean(A) / mean(B), over paired seeds (or repeats), with a
// percentile bootstrap interval: the seeds are resampled jointly, so each resample keeps
// A and B of one seed together (scipy.stats.bootstrap(paired=True, method="percentile")
// with statistic mean(a) / mean(b), which the tests check against).
#include <optional>
#include <vector>

#include "suite/stats/bootstrap.h"

namespace lrb::stats {

struct RatioEstimate {
  std::size_t n = 0;                  // pairs
  std::optional<double> ratio;        // mean(a) / mean(b); absent when mean(b) is 0 or n = 0
  std::optional<Interval> percentile; // n >= 2; absent when a resample's mean(b) is 0
  std::size_t resamples = 0;
  std::optional<std::uint64_t> seed;
  double confidence = 0.95;
};

// a[i] and b[i] belong to one seed.
RatioEstimate ratio_of_means(const std::vector<double>& a, const std::vector<double>& b, const ResampleSet& resamples,
                             double confidence = 0.95);
RatioEstimate ratio_of_means(const std::vector<double>& a, const std::vector<double>& b,
                             const BootstrapSettings& settings = {});

}  // namespace lrb::stats
