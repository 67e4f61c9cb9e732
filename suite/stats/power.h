#pragma once
// Power of the paired t-test, for "how many seeds would settle this?": the smallest number
// of paired seeds n at which a two-sided one-sample t-test at level alpha rejects with the
// wanted probability when the true standardised effect is d = (mean − threshold) / sd.
// power(n) = P(|T| > t_{1−α/2, n−1}) with T ~ noncentral t(n − 1, d·√n): statsmodels'
// TTestPower (alternative "two-sided"), which the tests check against.
#include <cstddef>
#include <optional>

namespace lrb::stats {

double paired_t_power(double effect_size, std::size_t n, double alpha);

// The smallest n >= 2 with power >= `power`, or nothing when it exceeds `max_n` (a zero
// effect never gets there).
std::optional<std::size_t> paired_t_seeds_needed(double effect_size, double alpha, double power = 0.8,
                                                 std::size_t max_n = 100000);

}  // namespace lrb::stats
