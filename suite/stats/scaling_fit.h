#pragma once
// Least-squares line fits for scaling claims: "peak memory ∝ N^slope" is the slope of
// log(memory) against log(N); near 1 reads "linear in N", near 2 "quadratic".
// Matches scipy.stats.linregress, with the slope interval slope ± t_{(1+c)/2, n-2}·stderr.
#include <cstddef>
#include <optional>
#include <vector>

#include "suite/stats/sample_stats.h"

namespace lrb::stats {

struct LineFit {
  std::size_t n = 0;
  double slope = 0.0;
  double intercept = 0.0;
  double r_squared = 0.0;             // 0 when y is constant
  std::optional<double> slope_stderr; // needs n >= 3 (n - 2 residual df)
  std::optional<Interval> slope_ci;   // needs n >= 3
  double confidence = 0.95;
};

// y = intercept + slope·x. Needs n >= 2 and at least two distinct x (UserError otherwise).
LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y, double confidence = 0.95);

// log(y) = intercept + slope·log(x), natural logs, so y ≈ exp(intercept)·x^slope.
// x and y must be positive (UserError otherwise).
LineFit fit_power_law(const std::vector<double>& x, const std::vector<double>& y, double confidence = 0.95);

}  // namespace lrb::stats
