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

// Fieller's interval for mean(A) / mean(B) over paired seeds: the ratios ρ whose paired
// differences A − ρ·B have a one-sample |t| below `critical` (Fieller 1954, JRSS B 16:175-185).
// Unlike a bootstrap it holds at any level, however small, so a sequential study's repeated
// intervals use it. Absent when the set is unbounded (mean(B) indistinguishable from 0 at
// that level) or n < 2; a point when neither side varies.
std::optional<Interval> fieller_paired_ratio(const std::vector<double>& a, const std::vector<double>& b, double critical);

}  // namespace lrb::stats
