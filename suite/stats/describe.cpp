#include "suite/stats/describe.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "suite/core/errors.h"
#include "suite/stats/t_tests.h"

namespace lrb::stats {

CellSummary describe(const std::vector<double>& values, const BootstrapSettings& bootstrap) {
  return describe(values, bootstrap_mean(values, bootstrap));  // the overload below checks the values
}

CellSummary describe(const std::vector<double>& values, BootstrapInterval bootstrap) {
  for (double v : values) LRB_CHECK(std::isfinite(v), "describe: non-finite value in a cell");
  CellSummary s;
  s.n = values.size();
  s.confidence = bootstrap.confidence;
  s.bootstrap = std::move(bootstrap);
  if (values.empty()) return s;

  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  s.mean = mean(values);
  s.median = median(sorted);
  s.q1 = quantile_sorted(sorted, 0.25);
  s.q3 = quantile_sorted(sorted, 0.75);
  s.iqr = *s.q3 - *s.q1;
  s.iqm = trim_mean(sorted, 0.25);
  s.min = sorted.front();
  s.max = sorted.back();

  const TTest t = t_test_one_sample(values, s.confidence);
  if (values.size() >= 2) {
    s.std = sample_std(values);
    s.sem = t.std_error;
    s.t_ci = t.ci;
  }
  return s;
}

}  // namespace lrb::stats
