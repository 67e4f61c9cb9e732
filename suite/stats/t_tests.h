#pragma once
// Student-t inference: the t interval of a mean, the one-sample t-test (used on per-seed
// differences: the paired t-test), and Welch's unequal-variance two-sample test.
// Two-sided p-values throughout; distributions come from Boost.Math.
#include <cstddef>
#include <optional>
#include <vector>

#include "suite/stats/sample_stats.h"

namespace lrb::stats {

struct TTest {
  std::size_t n = 0;                  // values (one-sample) or n_a + n_b (Welch)
  std::optional<double> estimate;     // mean, or mean(a) - mean(b); absent when n = 0
  std::optional<double> std_error;    // absent when a variance is undefined (n < 2)
  std::optional<double> df;           // absent when undefined (n < 2, or Welch with both variances 0)
  std::optional<double> statistic;    // t; absent when the standard error is 0 (t would be ±inf or 0/0)
  std::optional<double> p_value;      // two-sided
  std::optional<Interval> ci;         // estimate ± t_{(1+confidence)/2, df} · std_error
  double confidence = 0.95;
};

// H0: mean = 0. With n < 2 only the estimate is set. With zero variance the interval
// collapses to [mean, mean] and p is 1 when the mean is 0 (no difference on any seed), 0
// otherwise (the limit of t -> ±inf); there is never a NaN. Values whose mean or spread
// overflows a double give only the estimate (no test, no interval).
TTest t_test_one_sample(const std::vector<double>& x, double confidence = 0.95);

// Welch's t-test of mean(a) = mean(b) (scipy.stats.ttest_ind(equal_var=False)), with the
// Welch–Satterthwaite df. Needs n >= 2 on both sides for anything beyond the estimate;
// zero variance on both sides is handled as in t_test_one_sample.
TTest t_test_welch(const std::vector<double>& a, const std::vector<double>& b, double confidence = 0.95);

// Two-sided p-value of a t statistic and the (1+confidence)/2 quantile: the pieces above,
// exposed for other fits (e.g. the slope of a scaling fit).
double t_two_sided_p(double t, double df);
double t_critical(double confidence, double df);

}  // namespace lrb::stats
