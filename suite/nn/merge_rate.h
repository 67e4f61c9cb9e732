#pragma once
// How many tokens a merge may remove in a model whose attention slices the tokens into
// groups (SReT's sliced group attention, g1 groups on a block's first pass and g2 on its
// recursive passes). MergeOver's rule (arXiv 2608.13141, Eq. 3): the count r must keep
// (N - r) divisible by g = lcm(g1, g2), leave N - r >= g, and stay within ToMe's limit
// r <= floor(N / 2). A requested count is moved up to the next valid r, which is what the
// paper's stage lengths show (rho = 0.25: 784 -> 584, 196 -> 144, 49 -> 37).
#include <cstdint>

namespace lrb {

// g = lcm(g1, g2); both >= 1.
std::int64_t slice_multiple(std::int64_t g1, std::int64_t g2);

// Whether removing r of n tokens satisfies the rule for slice multiple g.
bool valid_merge_count(std::int64_t n, std::int64_t r, std::int64_t g);

// The smallest valid r >= requested; when none is (the requested count is beyond the limit
// or no larger r keeps the groups whole), the largest valid r below it; 0 (no merge) when
// no r > 0 is valid.
std::int64_t merge_count(std::int64_t n, std::int64_t requested, std::int64_t g);

// The stage-wise single-shot count: floor(rho * n) moved to the rule.
std::int64_t stage_merge_count(std::int64_t n, double rho, std::int64_t g);

}  // namespace lrb
