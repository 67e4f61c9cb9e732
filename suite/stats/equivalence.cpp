#include "suite/stats/equivalence.h"

#include <boost/math/distributions/students_t.hpp>

#include <cmath>

#include "suite/core/errors.h"
#include "suite/stats/sample_stats.h"

namespace lrb::stats {
namespace {

// One-sided p of H0: mean(x) <= 0 (greater) or >= 0 (less), on n − 1 df. No spread: the
// test's limit (0 when the mean lies strictly on the alternative's side, 1 otherwise).
double one_sided_p(const std::vector<double>& x, bool greater) {
  const double m = mean(x), sd = sample_std(x);
  const double n = static_cast<double>(x.size());
  if (sd == 0.0 || !std::isfinite(sd)) return (greater ? m > 0.0 : m < 0.0) ? 0.0 : 1.0;
  const double t = m / (sd / std::sqrt(n));
  if (std::isinf(t)) return (greater ? t > 0.0 : t < 0.0) ? 0.0 : 1.0;
  const boost::math::students_t_distribution<double> dist(n - 1.0);
  return greater ? boost::math::cdf(boost::math::complement(dist, t)) : boost::math::cdf(dist, t);
}

Equivalence from_shifted(const std::vector<double>& above_low, const std::vector<double>& below_high) {
  Equivalence e;
  if (above_low.size() < 2) return e;
  e.df = static_cast<double>(above_low.size()) - 1.0;
  e.p_lower = one_sided_p(above_low, true);
  e.p_upper = one_sided_p(below_high, false);
  e.p_value = std::max(*e.p_lower, *e.p_upper);
  return e;
}

}  // namespace

Equivalence tost_paired(const std::vector<double>& after, const std::vector<double>& before, double low, double high) {
  LRB_CHECK(after.size() == before.size(), "paired values come in pairs");
  LRB_CHECK(low < high, "an equivalence interval has low < high");
  std::vector<double> above(after.size()), below(after.size());
  for (std::size_t i = 0; i < after.size(); ++i) {
    const double d = after[i] - before[i];
    above[i] = d - low;
    below[i] = d - high;
  }
  return from_shifted(above, below);
}

Equivalence tost_paired_ratio(const std::vector<double>& after, const std::vector<double>& before, double low, double high) {
  LRB_CHECK(after.size() == before.size(), "paired values come in pairs");
  LRB_CHECK(0.0 < low && low < high, "a ratio's equivalence interval has 0 < low < high");
  std::vector<double> above(after.size()), below(after.size());
  for (std::size_t i = 0; i < after.size(); ++i) {
    above[i] = after[i] - low * before[i];
    below[i] = after[i] - high * before[i];
  }
  return from_shifted(above, below);
}

}  // namespace lrb::stats
