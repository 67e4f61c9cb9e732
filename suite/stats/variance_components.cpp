#include "suite/stats/variance_components.h"

#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/distributions/normal.hpp>

#include <algorithm>
#include <cmath>
#include <functional>

#include "suite/core/errors.h"

namespace lrb::stats {

namespace {

using Mask = std::uint32_t;  // a set of factors, bit f for factor f

bool subset_of(Mask a, Mask b) { return (a & ~b) == 0; }

int bits(Mask m) { return __builtin_popcount(m); }

// Q_S = (N / Π_{f∈S} n_f) Σ over the levels of S of (the mean over the other factors)²: the
// uncorrected sum of squares of the S-marginal means, each counted for its N / cells values.
double marginal_square_sum(Mask s, const std::vector<std::int64_t>& levels, const std::vector<double>& values) {
  const std::size_t k = levels.size();
  std::int64_t cells = 1;
  for (std::size_t f = 0; f < k; ++f)
    if (s >> f & 1) cells *= levels[f];
  std::vector<double> sums(static_cast<std::size_t>(cells), 0.0);
  std::vector<std::int64_t> index(k, 0);
  for (const double y : values) {
    std::int64_t cell = 0;
    for (std::size_t f = 0; f < k; ++f)
      if (s >> f & 1) cell = cell * levels[f] + index[f];
    sums[static_cast<std::size_t>(cell)] += y;
    for (std::size_t f = k; f-- > 0;) {  // the last factor fastest
      if (++index[f] < levels[f]) break;
      index[f] = 0;
    }
  }
  const double per_cell = static_cast<double>(values.size()) / static_cast<double>(cells);
  double q = 0;
  for (const double sum : sums) q += sum * sum / per_cell;
  return q;
}

// Satterthwaite's interval for Σ c_U MS_U, a positive estimate.
void satterthwaite(VarianceTerm& t, const std::vector<std::pair<double, const VarianceTerm*>>& parts, double confidence) {
  if (!(t.component > 0)) return;
  double denominator = 0;
  for (const auto& [c, u] : parts) denominator += std::pow(c * u->mean_sq, 2) / static_cast<double>(u->df);
  if (!(denominator > 0)) return;
  const double df = t.component * t.component / denominator;
  const boost::math::chi_squared chi(df);
  const double alpha = 1 - confidence;
  t.satterthwaite_df = df;
  t.interval = std::make_pair(df * t.component / boost::math::quantile(chi, 1 - alpha / 2),
                              df * t.component / boost::math::quantile(chi, alpha / 2));
}

}  // namespace

VarianceComponents crossed_variance_components(const std::vector<std::string>& factors, const std::vector<std::int64_t>& levels,
                                               const std::vector<double>& values, double confidence) {
  const std::size_t k = factors.size();
  LRB_CHECK(k >= 2 && k <= 8 && levels.size() == k, "a crossed design of 2 to 8 factors, each with its levels");
  std::int64_t n = 1;
  for (const auto l : levels) {
    LRB_CHECK(l >= 2, "every factor of a crossed design has at least 2 levels");
    n *= l;
  }
  LRB_CHECK(static_cast<std::size_t>(n) == values.size(), "one value per combination of levels");
  VarianceComponents out{factors, levels, {}, 0, confidence};
  const Mask all = (Mask{1} << k) - 1;
  std::vector<double> q(all + 1);
  for (Mask s = 0; s <= all; ++s) q[s] = marginal_square_sum(s, levels, values);
  // Terms by size, then by the factors' order (the residual, every factor, last).
  std::vector<Mask> order;
  for (Mask s = 1; s <= all; ++s) order.push_back(s);
  std::stable_sort(order.begin(), order.end(), [](Mask a, Mask b) {
    if (bits(a) != bits(b)) return bits(a) < bits(b);
    for (Mask f = 1; f <= a || f <= b; f <<= 1)
      if ((a & f) != (b & f)) return (a & f) != 0;
    return false;
  });
  std::vector<VarianceTerm> by_mask(all + 1);
  for (const Mask t : order) {
    VarianceTerm& term = by_mask[t];
    term.df = 1;
    for (std::size_t f = 0; f < k; ++f)
      if (t >> f & 1) {
        term.factors.push_back(factors[f]);
        term.df *= levels[f] - 1;
      }
    for (Mask s = t;; s = (s - 1) & t) {  // SS_T = Σ_{S⊆T} (−1)^{|T|−|S|} Q_S
      term.sum_sq += ((bits(t) - bits(s)) % 2 ? -1.0 : 1.0) * q[s];
      if (s == 0) break;
    }
    term.sum_sq = std::max(0.0, term.sum_sq);  // rounding below 0 on constant data
    term.mean_sq = term.sum_sq / static_cast<double>(term.df);
  }
  double total = 0;
  for (const Mask t : order) {
    VarianceTerm& term = by_mask[t];
    double k_t = 1;
    for (std::size_t f = 0; f < k; ++f)
      if (!(t >> f & 1)) k_t *= static_cast<double>(levels[f]);
    std::vector<std::pair<double, const VarianceTerm*>> parts;
    for (const Mask u : order)
      if (subset_of(t, u)) parts.emplace_back(((bits(u) - bits(t)) % 2 ? -1.0 : 1.0) / k_t, &by_mask[u]);
    for (const auto& [c, u] : parts) term.component += c * u->mean_sq;
    satterthwaite(term, parts, confidence);
    total += std::max(0.0, term.component);
  }
  out.total = total;
  for (const Mask t : order) {
    VarianceTerm& term = by_mask[t];
    term.share = total > 0 ? std::max(0.0, term.component) / total : 0;
    out.terms.push_back(std::move(term));
  }
  return out;
}

std::int64_t VarianceComponents::levels_of(const std::string& factor) const {
  const auto it = std::find(factors.begin(), factors.end(), factor);
  LRB_CHECK(it != factors.end() && levels.size() == factors.size(), "a factor of the design");
  return levels[static_cast<std::size_t>(it - factors.begin())];
}

double variance_of_mean(const VarianceComponents& v, const std::vector<std::int64_t>& levels) {
  LRB_CHECK(levels.size() == v.factors.size(), "a level count per factor");
  double var = 0;
  for (const auto& t : v.terms) {
    double cells = 1;
    for (const auto& f : t.factors)
      cells *= static_cast<double>(levels[static_cast<std::size_t>(std::find(v.factors.begin(), v.factors.end(), f) - v.factors.begin())]);
    var += std::max(0.0, t.component) / cells;
  }
  return var;
}

namespace {

// The smallest n in [lo, most] with reached(n), which is monotone; nothing when none is.
std::optional<std::int64_t> smallest(std::int64_t lo, std::int64_t most, const std::function<bool(std::int64_t)>& reached) {
  if (lo > most || !reached(most)) return std::nullopt;
  std::int64_t hi = most;
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (reached(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

// Whether the mean's standard error is small enough: |mean| ≥ (z_{1−level/2} + z_power) · se.
bool powered(double variance, double mean, double level, double power) {
  const boost::math::normal z;
  const double needed = boost::math::quantile(z, 1 - level / 2) + boost::math::quantile(z, power);
  return std::fabs(mean) >= needed * std::sqrt(variance);
}

}  // namespace

std::optional<std::int64_t> levels_needed(const VarianceComponents& v, std::size_t factor, double mean, double level, double power,
                                          std::int64_t most) {
  LRB_CHECK(factor < v.factors.size(), "a factor of the design");
  return smallest(2, most, [&](std::int64_t n) {
    std::vector<std::int64_t> levels = v.levels;
    levels[factor] = n;
    return powered(variance_of_mean(v, levels), mean, level, power);
  });
}

std::optional<std::int64_t> levels_needed_each(const VarianceComponents& v, double mean, double level, double power, std::int64_t most) {
  return smallest(2, most, [&](std::int64_t n) {
    return powered(variance_of_mean(v, std::vector<std::int64_t>(v.factors.size(), n)), mean, level, power);
  });
}

}  // namespace lrb::stats
