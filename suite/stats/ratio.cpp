#include "suite/stats/ratio.h"

#include <algorithm>

#include "suite/core/errors.h"

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

}  // namespace lrb::stats
