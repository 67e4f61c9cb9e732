#include "suite/stats/bootstrap.h"

#include <boost/math/distributions/normal.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

#include "suite/core/errors.h"
#include "suite/core/seeds.h"

namespace lrb::stats {

ResampleSet draw_resamples(std::size_t n, std::size_t count, std::uint64_t seed) {
  LRB_CHECK(n > 0 && n <= std::numeric_limits<std::uint32_t>::max(), "draw_resamples: bad sample size");
  ResampleSet set;
  set.n = n;
  set.count = count;
  set.indices.resize(n * count);
  Rng rng(seed);
  for (auto& i : set.indices) i = static_cast<std::uint32_t>(rng.below(n));
  return set;
}

namespace {

// sum_i c_i·x_i / n in index order (see the header for why counts).
double mean_from_counts(const std::vector<double>& x, const std::vector<std::uint32_t>& counts) {
  double s = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) s += static_cast<double>(counts[i]) * x[i];
  return s / static_cast<double>(x.size());
}

// np.percentile(a, 100·q): numpy divides the percentage by 100 again; keep its rounding.
double percentile_of(const std::vector<double>& sorted, double q) {
  return quantile_sorted(sorted, (q * 100.0) / 100.0);
}

}  // namespace

BootstrapInterval bootstrap_mean(const std::vector<double>& x, const ResampleSet& resamples, double confidence) {
  if (!(confidence > 0.0 && confidence < 1.0)) throw UserError("bootstrap confidence must lie in (0, 1)");
  BootstrapInterval r;
  r.n = x.size();
  r.resamples = resamples.count;
  r.confidence = confidence;
  if (x.size() < 2 || resamples.count == 0) return r;
  LRB_CHECK(resamples.n == x.size(), "bootstrap: resample size differs from the sample size");
  const std::size_t n = x.size();

  std::vector<std::uint32_t> counts(n, 1);
  const double theta_hat = mean_from_counts(x, counts);
  std::vector<double> theta_b(resamples.count);
  for (std::size_t b = 0; b < resamples.count; ++b) {
    std::fill(counts.begin(), counts.end(), 0);
    const std::uint32_t* idx = resamples.row(b);
    for (std::size_t j = 0; j < n; ++j) {
      LRB_CHECK(idx[j] < n, "bootstrap: resample index out of range");
      ++counts[idx[j]];
    }
    theta_b[b] = mean_from_counts(x, counts);
  }
  if (resamples.count >= 2) r.std_error = sample_std(theta_b);

  std::vector<double> sorted = theta_b;
  std::sort(sorted.begin(), sorted.end());
  const double alpha = (1.0 - confidence) / 2.0;
  r.percentile = Interval{percentile_of(sorted, alpha), percentile_of(sorted, 1.0 - alpha)};

  if (std::all_of(x.begin(), x.end(), [&](double v) { return v == x[0]; })) {
    // Zero variance: every resample equals the mean; BCa's acceleration is 0/0, the
    // interval is the point.
    r.bias_correction = 0.0;
    r.bca = Interval{theta_hat, theta_hat};
    return r;
  }

  // z0 from the share of resamples below the estimate (ties count half).
  std::size_t below = 0, at_or_below = 0;
  for (double t : theta_b) {
    below += t < theta_hat;
    at_or_below += t <= theta_hat;
  }
  const double share = static_cast<double>(below + at_or_below) / (2.0 * static_cast<double>(theta_b.size()));
  if (share <= 0.0 || share >= 1.0) return r;  // z0 = ±inf: SciPy's interval is NaN
  const boost::math::normal_distribution<double> norm;
  const double z0 = boost::math::quantile(norm, share);
  r.bias_correction = z0;

  // Acceleration from the jackknife (leave-one-out means).
  std::vector<double> theta_i(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::fill(counts.begin(), counts.end(), 1);
    counts[i] = 0;
    double s = 0.0;
    for (std::size_t j = 0; j < n; ++j) s += static_cast<double>(counts[j]) * x[j];
    theta_i[i] = s / static_cast<double>(n - 1);
  }
  const double theta_dot = mean(theta_i);
  double num = 0.0, den = 0.0;
  for (double t : theta_i) {
    const double u = static_cast<double>(n - 1) * (theta_dot - t);
    num += u * u * u;
    den += u * u;
  }
  const double nd = static_cast<double>(n);
  num /= nd * nd * nd;
  den /= nd * nd;
  if (den <= 0.0) return r;
  const double a = 1.0 / 6.0 * num / std::pow(den, 1.5);
  r.acceleration = a;

  const double z_alpha = boost::math::quantile(norm, alpha);
  const double num1 = z0 + z_alpha;
  const double num2 = z0 - z_alpha;
  const double arg1 = z0 + num1 / (1.0 - a * num1);
  const double arg2 = z0 + num2 / (1.0 - a * num2);
  if (!std::isfinite(arg1) || !std::isfinite(arg2)) return r;
  const double alpha_1 = boost::math::cdf(norm, arg1);
  const double alpha_2 = boost::math::cdf(norm, arg2);
  r.bca = Interval{percentile_of(sorted, alpha_1), percentile_of(sorted, alpha_2)};
  return r;
}

BootstrapInterval bootstrap_mean(const std::vector<double>& x, const BootstrapSettings& settings) {
  if (settings.resamples == 0) throw UserError("bootstrap resamples must be at least 1");
  BootstrapInterval r;
  if (x.size() >= 2) {
    r = bootstrap_mean(x, draw_resamples(x.size(), settings.resamples, settings.seed), settings.confidence);
  } else {
    r = bootstrap_mean(x, ResampleSet{}, settings.confidence);
  }
  r.resamples = settings.resamples;
  r.seed = settings.seed;
  return r;
}

}  // namespace lrb::stats
