#pragma once
// Bootstrap intervals of a mean: percentile and BCa, following SciPy 1.10's
// scipy.stats.bootstrap (_resampling.py: _percentile_of_score, _bca_interval, np.percentile).
//
// The core takes an explicit set of resample indices, so a test can feed a fixed set and
// match a reference bit for bit; the convenience overload draws them with lrb::Rng from a
// recorded seed. A resample's mean is computed from per-index counts, summed in index order
// (sum_i c_i·x_i / n): any permutation of the sample then gives exactly the sample mean,
// so the bias-correction count P(theta* < theta) is not disturbed by rounding.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "suite/stats/sample_stats.h"

namespace lrb::stats {

inline constexpr std::uint64_t kDefaultBootstrapSeed = 0x6c7262;  // "lrb"

struct BootstrapSettings {
  std::size_t resamples = 10000;
  std::uint64_t seed = kDefaultBootstrapSeed;
  double confidence = 0.95;
};

// count resamples of a sample of size n; row b holds n indices in [0, n).
struct ResampleSet {
  std::size_t n = 0;
  std::size_t count = 0;
  std::vector<std::uint32_t> indices;  // count × n, row-major
  const std::uint32_t* row(std::size_t b) const { return indices.data() + b * n; }
};

ResampleSet draw_resamples(std::size_t n, std::size_t count, std::uint64_t seed);

struct BootstrapInterval {
  std::size_t n = 0;                     // sample size
  std::size_t resamples = 0;
  std::optional<std::uint64_t> seed;     // absent when the resamples were given explicitly
  double confidence = 0.95;
  // Absent with n < 2. With zero variance both collapse to [mean, mean]. BCa is also absent
  // where SciPy's would be NaN: every resample mean on one side of the sample mean.
  std::optional<Interval> percentile;
  std::optional<Interval> bca;
  std::optional<double> bias_correction;  // z0 of BCa
  std::optional<double> acceleration;     // a of BCa (jackknife)
  std::optional<double> std_error;        // sd (ddof 1) of the resample means
};

BootstrapInterval bootstrap_mean(const std::vector<double>& x, const ResampleSet& resamples,
                                 double confidence = 0.95);
BootstrapInterval bootstrap_mean(const std::vector<double>& x, const BootstrapSettings& settings = {});

// bootstrap_mean(samples[k], settings) for every k, the same to the last bit, on every core.
// The resample indices depend only on (n, resamples, seed), so the samples of one size share
// one draw: a report's cells and paired comparisons, a hundred samples of a few thousand
// seeds at 100,000 runs, draw a few times instead of once each.
std::vector<BootstrapInterval> bootstrap_means(const std::vector<std::vector<double>>& samples,
                                               const BootstrapSettings& settings = {});

}  // namespace lrb::stats
