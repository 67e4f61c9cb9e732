#pragma once
// The boundaries of a group-sequential t-test whose variance is estimated at each look.
//
// group_sequential.h finds each look's boundary for a known variance; reading that boundary's
// nominal level off Student's t at the look's degrees of freedom (Jennison & Turnbull 2000,
// §3.8) is anti-conservative: the looks' t statistics share their variance estimates, and
// with few seeds the false "supported" rate was 0.0258 for looks at {5, 10, ..., 60} and
// 0.0274 for {2, 3, ..., 20} against a nominal 0.025 a side. Here each look's |t| boundary
// is the one whose crossing probability under H0, given no earlier crossing, is what the
// spending function allows, for the joint law of the looks' t statistics (a paired mean,
// Jennison & Turnbull 1991, Biometrics 47:1347-1356). That law depends only on the looks'
// sizes, so it is simulated once per sequence of sizes: 2^20 null studies from their
// sufficient statistics (each look adds a batch mean and a χ² of its spread), the same
// numbers in every process. Where a look spends less than 200 of those studies can place,
// its boundary is Student's exact tail less what the studies that crossed earlier would take.
// The error rate is then α up to the simulation's ±0.0002 (tests/unit/stats).
#include <cstddef>
#include <vector>

namespace lrb::stats {

struct SequentialTBoundary {
  std::vector<double> t;        // reject at look k when |t_k| ≥ t[k] (+inf: nothing spent there)
  std::vector<double> nominal;  // the same as a two-sided level of Student's t on sizes[k] − 1 df
};

// `sizes`: the observations each look's mean rests on, non-decreasing, each at least 2.
// `spent`: the cumulative two-sided error allowed by each look (SpendingBoundary::spent).
// Kept for the process: a report asks again for every claim and every look.
SequentialTBoundary sequential_t_boundary(const std::vector<std::size_t>& sizes, const std::vector<double>& spent);

}  // namespace lrb::stats
