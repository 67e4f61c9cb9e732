#pragma once
// Wilcoxon signed-rank test of per-seed differences (two-sided), following
// scipy.stats.wilcoxon 1.10 with zero_method="wilcox", correction=False:
//  - exact: the null distribution of R+ over the 2^n sign patterns; p = 2·min(P(R+ <= r),
//    P(R+ >= r)) capped at 1, and 1 when r is the centre of the distribution.
//  - approx: zeros dropped, z = (T - n(n+1)/4) / se with T = min(R+, R-), se with the tie
//    correction, no continuity correction; p = 2·sf(|z|).
//
// kAuto (our default) uses exact when n <= 50 with no zeros and no tied |d|, else approx.
// SciPy 1.10's own "auto" differs in one case: with ties but no zeros it still uses the
// exact distribution, with R+ truncated to an integer — not a valid null distribution for
// tied ranks. kExact reproduces that (SciPy's method="exact"; zeros still fall back to approx
// as in SciPy); kApprox is SciPy's method="approx".
#include <cstddef>
#include <optional>
#include <vector>

namespace lrb::stats {

enum class WilcoxonMethod { kAuto, kExact, kApprox };

struct WilcoxonResult {
  std::size_t n = 0;                 // differences given
  std::size_t n_zero = 0;            // of them exactly 0 (dropped by zero_method "wilcox")
  bool ties = false;                 // tied |d| among the nonzero differences
  WilcoxonMethod method_used = WilcoxonMethod::kExact;  // kExact or kApprox, never kAuto
  std::optional<double> statistic;   // min(R+, R-), SciPy's two-sided statistic
  std::optional<double> z;           // approx only
  // Absent for n = 0. When every difference is 0 (SciPy raises) p is 1: the two sides are
  // identical on every seed, so there is no evidence of a difference.
  std::optional<double> p_value;
};

WilcoxonResult wilcoxon_signed_rank(const std::vector<double>& differences,
                                    WilcoxonMethod method = WilcoxonMethod::kAuto);

// P(R+ = r), r = 0 .. n(n+1)/2, for n untied nonzero differences (exact in double for n <= 53).
std::vector<double> wilcoxon_null_pmf(std::size_t n);

}  // namespace lrb::stats
