#include "suite/stats/wilcoxon.h"

#include <boost/math/distributions/normal.hpp>

#include <algorithm>
#include <cmath>

#include "suite/core/errors.h"
#include "suite/stats/sample_stats.h"

namespace lrb::stats {

std::vector<double> wilcoxon_null_pmf(std::size_t n) {
  // Adding rank k to the sign pattern either leaves R+ or shifts it by k, each with
  // probability 1/2. All entries are multiples of 2^-n, so the doubles are exact.
  std::vector<double> c{1.0};
  for (std::size_t k = 1; k <= n; ++k) {
    std::vector<double> next(k * (k + 1) / 2 + 1, 0.0);
    const std::size_t m = c.size();
    for (std::size_t i = 0; i < m; ++i) {
      next[i] += c[i] * 0.5;
      next[next.size() - m + i] += c[i] * 0.5;
    }
    c = std::move(next);
  }
  return c;
}

WilcoxonResult wilcoxon_signed_rank(const std::vector<double>& differences, WilcoxonMethod method) {
  WilcoxonResult r;
  r.n = differences.size();
  if (differences.empty()) return r;
  std::vector<double> d;
  for (double v : differences) {
    LRB_CHECK(std::isfinite(v), "wilcoxon: non-finite difference");
    if (v == 0.0) ++r.n_zero; else d.push_back(v);
  }
  std::vector<double> abs_d(d.size());
  for (std::size_t i = 0; i < d.size(); ++i) abs_d[i] = std::fabs(d[i]);
  {
    std::vector<double> s = abs_d;
    std::sort(s.begin(), s.end());
    r.ties = std::adjacent_find(s.begin(), s.end()) != s.end();
  }

  bool exact = false;
  switch (method) {
    case WilcoxonMethod::kAuto: exact = r.n <= 50 && r.n_zero == 0 && !r.ties; break;
    case WilcoxonMethod::kExact: exact = r.n_zero == 0; break;  // SciPy falls back on zeros
    case WilcoxonMethod::kApprox: exact = false; break;
  }
  r.method_used = exact ? WilcoxonMethod::kExact : WilcoxonMethod::kApprox;

  if (d.empty()) {  // every difference is 0
    r.statistic = 0.0;
    r.p_value = 1.0;
    return r;
  }

  const std::vector<double> ranks = rank_average(abs_d);
  double r_plus = 0.0, r_minus = 0.0;
  for (std::size_t i = 0; i < d.size(); ++i) (d[i] > 0 ? r_plus : r_minus) += ranks[i];
  const double t_stat = std::min(r_plus, r_minus);
  r.statistic = t_stat;
  const double count = static_cast<double>(d.size());

  if (exact) {
    const std::vector<double> pmf = wilcoxon_null_pmf(d.size());
    const auto rp = static_cast<std::size_t>(r_plus);  // SciPy's int(): truncates tied half-ranks
    if (rp == (pmf.size() - 1) / 2) {
      r.p_value = 1.0;
    } else {
      double p_less = 0.0, p_greater = 0.0;
      for (std::size_t i = 0; i <= rp; ++i) p_less += pmf[i];
      for (std::size_t i = rp; i < pmf.size(); ++i) p_greater += pmf[i];
      r.p_value = std::min(1.0, 2.0 * std::min(p_less, p_greater));
    }
    return r;
  }

  const double mn = count * (count + 1.0) * 0.25;
  double se = count * (count + 1.0) * (2.0 * count + 1.0);
  std::vector<double> s = abs_d;
  std::sort(s.begin(), s.end());
  for (std::size_t i = 0; i < s.size();) {
    std::size_t j = i + 1;
    while (j < s.size() && s[j] == s[i]) ++j;
    const double t = static_cast<double>(j - i);
    if (j - i > 1) se -= 0.5 * (t * (t * t - 1.0));
    i = j;
  }
  se = std::sqrt(se / 24.0);
  const double z = (t_stat - mn) / se;
  r.z = z;
  const boost::math::normal_distribution<double> norm;
  r.p_value = std::min(1.0, 2.0 * boost::math::cdf(boost::math::complement(norm, std::fabs(z))));
  return r;
}

}  // namespace lrb::stats
