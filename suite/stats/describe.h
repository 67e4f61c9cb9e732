#pragma once
// One cell of a table: a (model, task, setting) over its seeds. The report's JSON keys map
// as n -> n, mean, std, sem, ci95 -> t_ci, bootstrap_bca95 -> bootstrap.bca, median, iqm.
// Failed and stopped runs are not values: the caller counts and shows them beside n.
#include <cstddef>
#include <optional>
#include <vector>

#include "suite/stats/bootstrap.h"
#include "suite/stats/sample_stats.h"

namespace lrb::stats {

struct CellSummary {
  std::size_t n = 0;
  // Defined for n >= 1.
  std::optional<double> mean, median, q1, q3, iqr, iqm, min, max;
  // Defined for n >= 2 (n = 1 prints "n=1", never a number). Zero variance gives std 0
  // and intervals collapsed to [mean, mean].
  std::optional<double> std, sem;
  std::optional<Interval> t_ci;  // Student t, df n - 1, at `confidence`
  BootstrapInterval bootstrap;   // of the mean: percentile and BCa, resamples and seed recorded
  double confidence = 0.95;
};

// q1/q3: numpy's linear quantile; iqm: scipy.stats.trim_mean(values, 0.25).
// Non-finite values are a caller bug (a failed run is not a value).
CellSummary describe(const std::vector<double>& values, const BootstrapSettings& bootstrap = {});
// The same with the bootstrap of `values` done already (bootstrap_means, many cells at once).
CellSummary describe(const std::vector<double>& values, BootstrapInterval bootstrap);

}  // namespace lrb::stats
