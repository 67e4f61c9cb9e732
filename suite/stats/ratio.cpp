#include "suite/stats/ratio.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "suite/core/errors.h"
#include "suite/stats/sample_stats.h"

namespace lrb::stats {

RatioEstimate ratio_of_means(const std::vector<double>& a, const std::vector<double>& b, const ResampleSet& resamples,
                             double confidence) {
  LRB_CHECK(a.size() == b.size(), "ratio_of_means: a and b must be paired");
  if (!(confidence > 0.0 && confidence < 1.0)) throw UserError("bootstrap confidence must lie in (0, 1)");
  RatioEstimate r;
  r.n = a.size();
  r.resamples = resamples.count;
  r.confidence = confidence;
  if (a.empty()) return r;
  const double mb = mean(b);
  if (mb != 0.0) r.ratio = mean(a) / mb;
  if (a.size() < 2 || resamples.count == 0 || !r.ratio) return r;
  LRB_CHECK(resamples.n == a.size(), "ratio_of_means: resample size differs from the sample size");
  const std::size_t n = a.size();
  std::vector<double> ratios(resamples.count);
  for (std::size_t k = 0; k < resamples.count; ++k) {
    const std::uint32_t* idx = resamples.row(k);
    double sa = 0.0, sb = 0.0;
    for (std::size_t j = 0; j < n; ++j) {
      LRB_CHECK(idx[j] < n, "ratio_of_means: resample index out of range");
      sa += a[idx[j]];
      sb += b[idx[j]];
    }
    if (sb == 0.0) return r;  // a resample without B: no interval
    ratios[k] = (sa / static_cast<double>(n)) / (sb / static_cast<double>(n));
  }
  std::sort(ratios.begin(), ratios.end());
  const double alpha = (1.0 - confidence) / 2.0;
  // np.percentile(x, 100·q) divides by 100 again: keep its rounding, as bootstrap.cpp does.
  r.percentile = Interval{quantile_sorted(ratios, (alpha * 100.0) / 100.0), quantile_sorted(ratios, ((1.0 - alpha) * 100.0) / 100.0)};
  return r;
}

RatioEstimate ratio_of_means(const std::vector<double>& a, const std::vector<double>& b, const BootstrapSettings& settings) {
  if (settings.resamples == 0) throw UserError("bootstrap resamples must be at least 1");
  RatioEstimate r = a.size() >= 2 ? ratio_of_means(a, b, draw_resamples(a.size(), settings.resamples, settings.seed), settings.confidence)
                                  : ratio_of_means(a, b, ResampleSet{}, settings.confidence);
  r.resamples = settings.resamples;
  r.seed = settings.seed;
  return r;
}

std::optional<Interval> fieller_paired_ratio(const std::vector<double>& a, const std::vector<double>& b, double critical) {
  LRB_CHECK(a.size() == b.size(), "fieller_paired_ratio: a and b must be paired");
  const std::size_t n = a.size();
  if (n < 2) return std::nullopt;
  const double ma = mean(a), mb = mean(b);
  double saa = 0, sbb = 0, sab = 0;
  for (std::size_t i = 0; i < n; ++i) {
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
    sab += (a[i] - ma) * (b[i] - mb);
  }
  const double df = static_cast<double>(n - 1);
  saa /= df;
  sbb /= df;
  sab /= df;
  if (saa == 0 && sbb == 0) {
    if (mb == 0) return std::nullopt;
    return Interval{ma / mb, ma / mb};
  }
  if (!std::isfinite(critical)) return std::nullopt;
  // (ma − ρ·mb)² ≤ g·(saa − 2ρ·sab + ρ²·sbb), g = c²/n: a quadratic in ρ opening upwards
  // when mb² > g·sbb, and then bounded.
  const double g = critical * critical / static_cast<double>(n);
  const double qa = mb * mb - g * sbb, qb = ma * mb - g * sab, qc = ma * ma - g * saa;
  if (!(qa > 0)) return std::nullopt;
  const double disc = std::max(0.0, qb * qb - qa * qc);
  const double root = std::sqrt(disc);
  return Interval{(qb - root) / qa, (qb + root) / qa};
}

bool all_positive(const std::vector<double>& a, const std::vector<double>& b) {
  auto positive = [](double v) { return std::isfinite(v) && v > 0; };
  return std::all_of(a.begin(), a.end(), positive) && std::all_of(b.begin(), b.end(), positive);
}

std::optional<LogRatio> paired_log_ratio(const std::vector<double>& a, const std::vector<double>& b, double critical) {
  LRB_CHECK(a.size() == b.size(), "paired_log_ratio: a and b must be paired");
  if (a.size() < 2 || !all_positive(a, b)) return std::nullopt;
  std::vector<double> d(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) d[i] = std::log(a[i]) - std::log(b[i]);
  const double m = mean(d), sd = sample_std(d);
  const double half = sd == 0 ? 0.0 : critical * sd / std::sqrt(static_cast<double>(d.size()));
  if (!std::isfinite(half)) return LogRatio{std::exp(m), sd, Interval{0.0, std::numeric_limits<double>::infinity()}};
  return LogRatio{std::exp(m), sd, Interval{std::exp(m - half), std::exp(m + half)}};
}

}  // namespace lrb::stats
