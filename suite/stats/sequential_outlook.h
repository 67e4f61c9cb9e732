#pragma once
// What a group-sequential design of paired seeds will still do, found by running its judge
// many times over: at each look, |t| of the look's seeds against Student's t at the look's
// nominal level (group_sequential.h) on n − 1 degrees of freedom, stopping at the first
// crossing. Exact where the normal approximation of sequential_crossings() is not: at a few
// seeds a look's t has heavier tails, and power computed on Z is overstated (0.61 against
// 0.40 for one look at 5 seeds, d = 1, α = 0.05). Later seeds are drawn from N(mean, sd) of
// the seeds observed; a study that stands at some look goes on from its own seeds.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace lrb::stats {

struct SequentialOutlook {
  double expected_seeds = 0;  // seeds in all when the design stops (a decision, or max)
  double power = 0;           // share of studies decided toward the sign of the observed mean
  double decided = 0;         // share decided either way
};

// `observed`: the paired values so far (at least 2, with spread). `look_seeds`: the design's
// looks (seeds at each, increasing). `nominal`: each look's two-sided nominal level.
// `from_start`: a new study at the observed effect (the observed seeds are not reused);
// otherwise the study stands at observed.size() seeds, with its looks up to there made and
// not crossed, and goes on from them. Deterministic for a given `seed`.
SequentialOutlook sequential_outlook(const std::vector<double>& observed, const std::vector<std::int64_t>& look_seeds,
                                     const std::vector<double>& nominal, bool from_start, std::uint64_t seed = 1);

}  // namespace lrb::stats
