#include "suite/stats/bootstrap.h"

#include <boost/math/distributions/normal.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "suite/core/environment.h"
#include "suite/core/errors.h"
#include "suite/core/parallel_for.h"
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

// The intervals of the mean of x from its resample means theta_b (resample b's mean from
// its index counts, summed in index order) and theta_hat (x's mean, summed the same way).
BootstrapInterval intervals_from_means(const std::vector<double>& x, double theta_hat, std::vector<double> theta_b,
                                       double confidence) {
  BootstrapInterval r;
  r.n = x.size();
  r.resamples = theta_b.size();
  r.confidence = confidence;
  const std::size_t n = x.size();
  const std::size_t count = theta_b.size();
  if (count >= 2) r.std_error = sample_std(theta_b);

  std::vector<double>& sorted = theta_b;  // only the order of the resample means counts from here
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
  for (double t : sorted) {
    below += t < theta_hat;
    at_or_below += t <= theta_hat;
  }
  const double share = static_cast<double>(below + at_or_below) / (2.0 * static_cast<double>(count));
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

void check_confidence(double confidence) {
  if (!(confidence > 0.0 && confidence < 1.0)) throw UserError("bootstrap confidence must lie in (0, 1)");
}

// Resample means 0 .. count - 1 of the samples `which` (all of size n >= 2) into
// theta[which[k]], from one stream of Rng(seed): the very indices bootstrap_mean(x, settings)
// draws for each of them. Rows of index counts are drawn a block at a time; each resample
// mean is still sum_i c_i·x_i / n in index order, but four resamples are summed side by side
// (independent additions the processor overlaps, where one sum waits on each addition).
void resample_means_of_size(const std::vector<std::vector<double>>& samples, const std::vector<std::size_t>& which,
                            std::size_t n, std::size_t count, std::uint64_t seed,
                            std::vector<std::vector<double>>& theta) {
  constexpr std::size_t kSideBySide = 4;
  // About 256 KiB of counts per block (a core's cache), in whole groups of four rows.
  const std::size_t block_rows = std::max<std::size_t>(kSideBySide, (32768 / n) / kSideBySide * kSideBySide);
  std::vector<double> counts(block_rows * n);  // small integers, exact as doubles
  Rng rng(seed);
  const double nd = static_cast<double>(n);
  for (std::size_t first = 0; first < count; first += block_rows) {
    const std::size_t rows = std::min(block_rows, count - first);
    std::fill(counts.begin(), counts.begin() + static_cast<std::ptrdiff_t>(rows * n), 0.0);
    for (std::size_t b = 0; b < rows; ++b) {
      double* row = counts.data() + b * n;
      for (std::size_t j = 0; j < n; ++j) row[rng.below(n)] += 1.0;
    }
    for (std::size_t k : which) {
      const double* x = samples[k].data();
      double* out = theta[k].data() + first;
      std::size_t b = 0;
      for (; b + kSideBySide <= rows; b += kSideBySide) {
        const double* c0 = counts.data() + b * n;
        const double* c1 = c0 + n;
        const double* c2 = c1 + n;
        const double* c3 = c2 + n;
        double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
        for (std::size_t i = 0; i < n; ++i) {
          const double xi = x[i];
          s0 += c0[i] * xi;
          s1 += c1[i] * xi;
          s2 += c2[i] * xi;
          s3 += c3[i] * xi;
        }
        out[b] = s0 / nd;
        out[b + 1] = s1 / nd;
        out[b + 2] = s2 / nd;
        out[b + 3] = s3 / nd;
      }
      for (; b < rows; ++b) {
        const double* c = counts.data() + b * n;
        double s = 0.0;
        for (std::size_t i = 0; i < n; ++i) s += c[i] * x[i];
        out[b] = s / nd;
      }
    }
  }
}

}  // namespace

// The intervals from `count` resamples; add_resample(b, counts) adds resample b's index
// counts to the zeroed `counts`. Drawing the indices inside the loop, rather than holding
// count × n of them, keeps a report of 100,000 runs within memory.
template <class AddResample>
BootstrapInterval bootstrap_core(const std::vector<double>& x, std::size_t count, double confidence,
                                 AddResample add_resample) {
  check_confidence(confidence);
  if (x.size() < 2 || count == 0) {
    BootstrapInterval r;
    r.n = x.size();
    r.resamples = count;
    r.confidence = confidence;
    return r;
  }
  std::vector<std::uint32_t> counts(x.size(), 1);
  const double theta_hat = mean_from_counts(x, counts);
  std::vector<double> theta_b(count);
  for (std::size_t b = 0; b < count; ++b) {
    std::fill(counts.begin(), counts.end(), 0);
    add_resample(b, counts);
    theta_b[b] = mean_from_counts(x, counts);
  }
  return intervals_from_means(x, theta_hat, std::move(theta_b), confidence);
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

std::vector<BootstrapInterval> bootstrap_means(const std::vector<std::vector<double>>& samples,
                                               const BootstrapSettings& settings) {
  if (settings.resamples == 0) throw UserError("bootstrap resamples must be at least 1");
  check_confidence(settings.confidence);
  std::vector<BootstrapInterval> out(samples.size());
  std::map<std::size_t, std::vector<std::size_t>> by_size;  // n -> samples of that size
  for (std::size_t k = 0; k < samples.size(); ++k) {
    LRB_CHECK(samples[k].size() <= std::numeric_limits<std::uint32_t>::max(), "bootstrap: sample too large");
    if (samples[k].size() >= 2)
      by_size[samples[k].size()].push_back(k);
    else
      out[k] = bootstrap_mean(samples[k], settings);
  }
  // Pieces of work: the samples of one size, split so that every core has some. Each piece
  // draws its size's indices itself: drawing is cheap beside summing, and the pieces share nothing.
  struct Piece {
    std::size_t n = 0;
    std::vector<std::size_t> which;
  };
  std::vector<Piece> pieces;
  const std::size_t cores = static_cast<std::size_t>(std::max(1, available_cores()));
  std::size_t total = 0;
  for (const auto& [n, which] : by_size) total += which.size();
  for (const auto& [n, which] : by_size) {
    const std::size_t parts = std::clamp<std::size_t>((which.size() * cores + total - 1) / total, 1, which.size());
    for (std::size_t p = 0; p < parts; ++p) {
      Piece piece;
      piece.n = n;
      for (std::size_t k = p; k < which.size(); k += parts) piece.which.push_back(which[k]);
      pieces.push_back(std::move(piece));
    }
  }
  std::vector<std::vector<double>> theta(samples.size());
  for (const auto& [n, which] : by_size)
    for (std::size_t k : which) theta[k].resize(settings.resamples);
  parallel_for(pieces.size(), [&](std::size_t p) {
    resample_means_of_size(samples, pieces[p].which, pieces[p].n, settings.resamples, settings.seed, theta);
  });
  parallel_for(samples.size(), [&](std::size_t k) {
    if (samples[k].size() < 2) return;
    const std::vector<std::uint32_t> ones(samples[k].size(), 1);
    out[k] = intervals_from_means(samples[k], mean_from_counts(samples[k], ones), std::move(theta[k]), settings.confidence);
    out[k].seed = settings.seed;
  });
  return out;
}

}  // namespace lrb::stats
