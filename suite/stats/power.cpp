#include "suite/stats/power.h"

#include <boost/math/distributions/non_central_t.hpp>
#include <boost/math/distributions/students_t.hpp>

#include <cmath>

#include "suite/core/errors.h"

namespace lrb::stats {

double paired_t_power(double effect_size, std::size_t n, double alpha) {
  LRB_CHECK(n >= 2, "paired_t_power: needs n >= 2");
  LRB_CHECK(alpha > 0 && alpha < 1, "paired_t_power: alpha must lie in (0, 1)");
  const double df = static_cast<double>(n - 1);
  const double crit = boost::math::quantile(boost::math::complement(boost::math::students_t_distribution<double>(df), alpha / 2));
  const double nc = std::fabs(effect_size) * std::sqrt(static_cast<double>(n));
  const boost::math::non_central_t_distribution<double> t(df, nc);
  return boost::math::cdf(boost::math::complement(t, crit)) + boost::math::cdf(t, -crit);
}

std::optional<std::size_t> paired_t_seeds_needed(double effect_size, double alpha, double power, std::size_t max_n) {
  if (!(std::fabs(effect_size) > 0) || !std::isfinite(effect_size)) return std::nullopt;
  // Power grows with n: double to bracket, then bisect.
  std::size_t lo = 1, hi = 2;
  while (paired_t_power(effect_size, hi, alpha) < power) {
    lo = hi;
    if (hi >= max_n) return std::nullopt;
    hi = std::min(max_n, hi * 2);
  }
  while (hi - lo > 1) {
    const std::size_t mid = lo + (hi - lo) / 2;
    (paired_t_power(effect_size, mid, alpha) >= power ? hi : lo) = mid;
  }
  return hi;
}

}  // namespace lrb::stats
