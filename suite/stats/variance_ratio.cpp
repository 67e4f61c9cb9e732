#include "suite/stats/variance_ratio.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "suite/core/errors.h"

namespace lrb::stats {

namespace {

using Mask = std::uint32_t;  // a set of factors, bit f for v.factors[f]

Mask mask_of(const VarianceComponents& v, const std::vector<std::string>& names) {
  Mask m = 0;
  for (const auto& n : names) {
    const auto it = std::find(v.factors.begin(), v.factors.end(), n);
    LRB_CHECK(it != v.factors.end(), "a factor of the design");
    m |= Mask{1} << (it - v.factors.begin());
  }
  return m;
}

// V(S) as Σ_U c_U MS_U: σ²_T = (1/k_T) Σ_{U ⊇ T} (−1)^{|U|−|T|} MS_U summed over the terms T
// that meet S. One coefficient per term of v.terms.
std::vector<double> study_coefficients(const VarianceComponents& v, Mask varied) {
  std::vector<Mask> masks;
  for (const auto& t : v.terms) masks.push_back(mask_of(v, t.factors));
  std::vector<double> c(v.terms.size(), 0.0);
  for (std::size_t t = 0; t < masks.size(); ++t) {
    if (!(masks[t] & varied)) continue;
    double k_t = 1;
    for (std::size_t f = 0; f < v.factors.size(); ++f)
      if (!(masks[t] >> f & 1)) k_t *= static_cast<double>(v.levels[f]);
    for (std::size_t u = 0; u < masks.size(); ++u)
      if ((masks[t] & ~masks[u]) == 0)
        c[u] += ((__builtin_popcount(masks[u]) - __builtin_popcount(masks[t])) % 2 ? -1.0 : 1.0) / k_t;
  }
  return c;
}

double combine(const std::vector<double>& c, const std::vector<double>& mean_sq) {
  double s = 0;
  for (std::size_t u = 0; u < c.size(); ++u) s += c[u] * mean_sq[u];
  return s;
}

// The q-quantile of sorted values (linear between order statistics); ∞ stays ∞.
double quantile_sorted(const std::vector<double>& x, double q) {
  const double at = q * static_cast<double>(x.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(at));
  const std::size_t hi = std::min(lo + 1, x.size() - 1);
  if (std::isinf(x[hi]) || std::isinf(x[lo])) return x[hi];
  return x[lo] + (at - static_cast<double>(lo)) * (x[hi] - x[lo]);
}

}  // namespace

double study_variance(const VarianceComponents& v, const std::vector<std::string>& varied) {
  std::vector<double> ms;
  for (const auto& t : v.terms) ms.push_back(t.mean_sq);
  return combine(study_coefficients(v, mask_of(v, varied)), ms);
}

VarianceRatio variance_ratio(const VarianceComponents& v, const std::vector<std::string>& numerator,
                             const std::vector<std::string>& denominator, double confidence, std::uint64_t seed,
                             std::size_t draws) {
  LRB_CHECK(!numerator.empty() && !denominator.empty() && draws >= 100, "two non-empty sets of factors and draws to take");
  const std::vector<double> cn = study_coefficients(v, mask_of(v, numerator));
  const std::vector<double> cd = study_coefficients(v, mask_of(v, denominator));
  std::vector<double> ms;
  for (const auto& t : v.terms) ms.push_back(t.mean_sq);
  VarianceRatio out;
  out.confidence = confidence;
  const double num = std::max(0.0, combine(cn, ms)), den = combine(cd, ms);
  if (!(den > 0)) return out;
  // A study varying a subset of another's factors sees at most its variance: the ratio and its
  // interval are held to [0, 1] there (the unclipped pivots may pass 1; clipping keeps coverage).
  const Mask of = mask_of(v, numerator), against = mask_of(v, denominator);
  const double most = (of & ~against) == 0 ? 1.0 : std::numeric_limits<double>::infinity();
  out.estimate = std::min(most, num / den);
  std::mt19937_64 rng(seed);
  std::vector<std::gamma_distribution<double>> chi;  // χ²_df = Gamma(df / 2, 2)
  for (const auto& t : v.terms) chi.emplace_back(static_cast<double>(t.df) / 2, 2.0);
  std::vector<double> pivot(ms.size()), ratios;
  ratios.reserve(draws);
  for (std::size_t d = 0; d < draws; ++d) {
    for (std::size_t u = 0; u < ms.size(); ++u) pivot[u] = static_cast<double>(v.terms[u].df) * ms[u] / chi[u](rng);
    const double pn = std::max(0.0, combine(cn, pivot)), pd = combine(cd, pivot);
    // A pivot of the denominator at or below 0 leaves the ratio unbounded above.
    ratios.push_back(pd > 0 ? pn / pd : std::numeric_limits<double>::infinity());
  }
  std::sort(ratios.begin(), ratios.end());
  const double alpha = 1 - confidence;
  out.interval = std::make_pair(std::min(most, quantile_sorted(ratios, alpha / 2)), std::min(most, quantile_sorted(ratios, 1 - alpha / 2)));
  out.draws = draws;
  return out;
}

}  // namespace lrb::stats
