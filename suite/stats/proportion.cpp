#include "suite/stats/proportion.h"

#include <boost/math/distributions/beta.hpp>
#include <boost/math/distributions/normal.hpp>

#include <algorithm>
#include <cmath>

namespace lrb::stats {

std::optional<Interval> wilson_interval(std::size_t k, std::size_t n, double confidence) {
  if (n == 0 || k > n) return std::nullopt;
  const double z = boost::math::quantile(boost::math::normal_distribution<double>(), 0.5 + confidence / 2.0);
  const double nn = static_cast<double>(n), p = static_cast<double>(k) / nn, z2 = z * z;
  const double denom = 1.0 + z2 / nn;
  const double centre = (p + z2 / (2.0 * nn)) / denom;
  const double half = z * std::sqrt(p * (1.0 - p) / nn + z2 / (4.0 * nn * nn)) / denom;
  // Rounding may leave the ends a hair outside [0, 1] at k = 0 or n.
  return Interval{std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

std::optional<Interval> clopper_pearson_interval(std::size_t k, std::size_t n, double confidence) {
  if (n == 0 || k > n) return std::nullopt;
  const double tail = (1.0 - confidence) / 2.0, kk = static_cast<double>(k), nn = static_cast<double>(n);
  Interval i{0.0, 1.0};
  if (k > 0) i.lo = boost::math::quantile(boost::math::beta_distribution<double>(kk, nn - kk + 1.0), tail);
  if (k < n) i.hi = boost::math::quantile(boost::math::complement(boost::math::beta_distribution<double>(kk + 1.0, nn - kk), tail));
  return i;
}

}  // namespace lrb::stats
