#pragma once
// Equivalence: is a difference small enough to call "unchanged"? Two one-sided tests
// (Schuirmann 1987, J. Pharmacokinet. Biopharm. 15:657-680): H0 is that the true value lies
// at or beyond a bound, low or high; both one-sided t-tests must reject it, so p is the
// larger of their p-values, and p < α is the same as the 1 − 2α t interval lying inside
// (low, high). "No significant difference" says only that a test could not tell; this
// says the difference is bounded, and a study with too few seeds cannot claim it.
#include <optional>
#include <vector>

namespace lrb::stats {

struct Equivalence {
  std::optional<double> p_value;           // max(p_lower, p_upper); absent when n < 2
  std::optional<double> p_lower, p_upper;  // H0: value <= low; H0: value >= high
  std::optional<double> df;
};

// Paired differences x (after − before) against low < mean < high (statsmodels'
// ttost_paired(after, before, low, high)). With no spread (every difference equal) p is 0
// inside the bounds and 1 outside them.
Equivalence tost_paired(const std::vector<double>& after, const std::vector<double>& before, double low, double high);

// The ratio mean(after) / mean(before) of positive paired values against low < ratio < high,
// through Fieller's pivot (as fieller_paired_ratio): ratio > low is mean(after − low·before) > 0,
// ratio < high is mean(after − high·before) < 0, each a one-sided t-test on n − 1 df. p < α
// is the same as the 1 − 2α Fieller interval lying inside (low, high).
Equivalence tost_paired_ratio(const std::vector<double>& after, const std::vector<double>& before, double low, double high);

}  // namespace lrb::stats
