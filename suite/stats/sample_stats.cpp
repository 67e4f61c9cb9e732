#include "suite/stats/sample_stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "suite/core/errors.h"

namespace lrb::stats {

double mean(const std::vector<double>& x) {
  LRB_CHECK(!x.empty(), "mean of an empty sample");
  double s = 0.0;
  for (double v : x) s += v;
  return s / static_cast<double>(x.size());
}

double sample_variance(const std::vector<double>& x) {
  LRB_CHECK(x.size() >= 2, "sample variance needs n >= 2");
  const double m = mean(x);
  double ss = 0.0;
  for (double v : x) ss += (v - m) * (v - m);  // two-pass: no cancellation for near-constant runs
  return ss / static_cast<double>(x.size() - 1);
}

double sample_std(const std::vector<double>& x) { return std::sqrt(sample_variance(x)); }

double quantile_sorted(const std::vector<double>& sorted, double q) {
  LRB_CHECK(!sorted.empty(), "quantile of an empty sample");
  LRB_CHECK(q >= 0.0 && q <= 1.0, "quantile outside [0, 1]");
  const std::size_t n = sorted.size();
  const double virtual_index = static_cast<double>(n - 1) * q;
  if (virtual_index >= static_cast<double>(n - 1)) return sorted[n - 1];
  const double previous = std::floor(virtual_index);
  const auto i = static_cast<std::size_t>(previous);
  const double gamma = virtual_index - previous;
  const double a = sorted[i];
  const double b = sorted[i + 1];
  // numpy's _lerp: interpolate from the nearer end, so that gamma = 1 gives b exactly.
  const double diff = b - a;
  return gamma >= 0.5 ? b - diff * (1.0 - gamma) : a + diff * gamma;
}

double quantile(std::vector<double> x, double q) {
  std::sort(x.begin(), x.end());
  return quantile_sorted(x, q);
}

double median(std::vector<double> x) {
  LRB_CHECK(!x.empty(), "median of an empty sample");
  std::sort(x.begin(), x.end());
  const std::size_t n = x.size();
  if (n % 2 == 1) return x[n / 2];
  return (x[n / 2 - 1] + x[n / 2]) / 2.0;
}

double trim_mean(std::vector<double> x, double proportion) {
  LRB_CHECK(!x.empty(), "trim_mean of an empty sample");
  LRB_CHECK(proportion >= 0.0 && proportion < 0.5, "trim proportion outside [0, 0.5)");
  std::sort(x.begin(), x.end());
  const std::size_t n = x.size();
  const auto cut = static_cast<std::size_t>(proportion * static_cast<double>(n));
  double s = 0.0;
  for (std::size_t i = cut; i < n - cut; ++i) s += x[i];
  return s / static_cast<double>(n - 2 * cut);
}

std::vector<double> rank_average(const std::vector<double>& x) {
  const std::size_t n = x.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return x[a] < x[b]; });
  std::vector<double> ranks(n);
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i + 1;
    while (j < n && x[order[j]] == x[order[i]]) ++j;
    const double r = 0.5 * static_cast<double>(i + 1 + j);  // average of ranks i+1 .. j
    for (std::size_t k = i; k < j; ++k) ranks[order[k]] = r;
    i = j;
  }
  return ranks;
}

}  // namespace lrb::stats
