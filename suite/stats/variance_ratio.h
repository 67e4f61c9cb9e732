#pragma once
// How much of a crossed design's variance a study that varies only some of its factors would
// see: V(S) = Σ σ²_T over the terms T that involve a factor of S (the others are constant
// within such a study), and the ratio V(S1) / V(S2) of two such studies (Bouthillier et al.
// 2021 vary one source at a time: V({order}) / V({init}); a study varying init only against
// one varying everything: V({init}) / V(all)). Each V(S) is a linear combination of the
// design's mean squares, estimated without truncating its components at 0.
// Interval: the generalized confidence interval (Weerahandi 1993; Burdick, Borror &
// Montgomery 2005, ch. 5): each mean square's generalized pivot df·ms / χ²_df, independent
// across terms of a balanced design, carried through the same combination; the percentiles
// of the ratio of the pivots. Where S1 ⊆ S2 the ratio is at most 1, and the estimate and the
// interval are held there. Coverage by simulation: tests/unit/stats/stats_variance_ratio_test.cpp.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "suite/stats/variance_components.h"

namespace lrb::stats {

// V(S) for the factors `varied` (names of v.factors): the sum of the components of every
// term that involves one of them.
double study_variance(const VarianceComponents& v, const std::vector<std::string>& varied);

struct VarianceRatio {
  double estimate = 0;  // V̂(numerator) / V̂(denominator)
  std::optional<std::pair<double, double>> interval;  // none when V̂(denominator) is not positive
  double confidence = 0.95;
  std::size_t draws = 0;
};

// Factors not of v, an empty side: broken invariants (the claim's check named them).
VarianceRatio variance_ratio(const VarianceComponents& v, const std::vector<std::string>& numerator,
                             const std::vector<std::string>& denominator, double confidence, std::uint64_t seed,
                             std::size_t draws = 20000);

}  // namespace lrb::stats
