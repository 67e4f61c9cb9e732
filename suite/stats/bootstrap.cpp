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

// The intervals from `count` resamples; add_resample(b, counts) adds resample b's index
// counts to the zeroed `counts`. Drawing the indices inside the loop, rather than holding
// count × n of them, keeps a report of 100,000 runs within memory.
template <class AddResample>
BootstrapInterval bootstrap_core(const std::vector<double>& x, std::size_t count, double confidence,
                                 AddResample add_resample) {
  if (!(confidence > 0.0 && confidence < 1.0)) throw UserError("bootstrap confidence must lie in (0, 1)");
  BootstrapInterval r;
  r.n = x.size();
  r.resamples = count;
  r.confidence = confidence;
  if (x.size() < 2 || count == 0) return r;
  const std::size_t n = x.size();

  std::vector<std::uint32_t> counts(n, 1);
  const double theta_hat = mean_from_counts(x, counts);
  std::vector<double> theta_b(count);
  for (std::size_t b = 0; b < count; ++b) {
    std::fill(counts.begin(), counts.end(), 0);
    add_resample(b, counts);
    theta_b[b] = mean_from_counts(x, counts);
  }
  if (count >= 2) r.std_error = sample_std(theta_b);

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

  // Acceleration from the jackknife (leave-one-out means), each from the sample's sum: linear
  // in n, where summing each leave-one-out sample again would be quadratic (a cell of
  // 10,000 seeds). The rounding differs from SciPy's np.mean by a few ulps, as before.
  double total = 0.0;
  for (double v : x) total += v;
  std::vector<double> theta_i(n);
  for (std::size_t i = 0; i < n; ++i) theta_i[i] = (total - x[i]) / static_cast<double>(n - 1);
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

BootstrapInterval bootstrap_mean(const std::vector<double>& x, const ResampleSet& resamples, double confidence) {
  LRB_CHECK(resamples.count == 0 || x.size() < 2 || resamples.n == x.size(),
            "bootstrap: resample size differs from the sample size");
  const std::size_t n = x.size();
  return bootstrap_core(x, resamples.count, confidence, [&](std::size_t b, std::vector<std::uint32_t>& counts) {
    const std::uint32_t* idx = resamples.row(b);
    for (std::size_t j = 0; j < n; ++j) {
      LRB_CHECK(idx[j] < n, "bootstrap: resample index out of range");
      ++counts[idx[j]];
    }
  });
}

BootstrapInterval bootstrap_mean(const std::vector<double>& x, const BootstrapSettings& settings) {
  if (settings.resamples == 0) throw UserError("bootstrap resamples must be at least 1");
  // The very indices draw_resamples(n, resamples, seed) would hold, drawn row by row.
  const std::size_t n = x.size();
  LRB_CHECK(n <= std::numeric_limits<std::uint32_t>::max(), "bootstrap: sample too large");
  Rng rng(settings.seed);
  BootstrapInterval r = bootstrap_core(x, n >= 2 ? settings.resamples : 0, settings.confidence,
                                       [&](std::size_t, std::vector<std::uint32_t>& counts) {
                                         for (std::size_t j = 0; j < n; ++j) ++counts[rng.below(n)];
                                       });
  r.resamples = settings.resamples;
  r.seed = settings.seed;
  return r;
}

}  // namespace lrb::stats
