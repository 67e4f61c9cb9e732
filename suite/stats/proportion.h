#pragma once
// A share of successes k out of n with its confidence interval: the share of a cell's runs
// that reached a target. Wilson's score interval (Wilson 1927) and the exact
// Clopper–Pearson interval (1934), as statsmodels' proportion_confint(method="wilson") and
// (method="beta") compute them; the tests check both against statsmodels.
#include <cstddef>
#include <optional>

#include "suite/stats/sample_stats.h"

namespace lrb::stats {

// Both need n >= 1 and k <= n (nothing otherwise: no runs, no share).
std::optional<Interval> wilson_interval(std::size_t k, std::size_t n, double confidence = 0.95);
// Exact: the Beta quantiles, with [0, …] at k = 0 and […, 1] at k = n.
std::optional<Interval> clopper_pearson_interval(std::size_t k, std::size_t n, double confidence = 0.95);

}  // namespace lrb::stats
