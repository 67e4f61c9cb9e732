#pragma once
// Simulated studies of one paired claim ("A is better than B"), judged as lrbench judges
// them: the sequential judge of suite/report/claims/sequential_claims.h on run records, against
// the naive rule (a fixed-n 95 % t interval at every look, stopping when it clears) and the
// fixed design (one test at max seeds). Shared by the simulation test
// (tests/unit/report/sequential_claims_test.cpp) and the benchmark (tests/bench/sequential_sim.sh).
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "suite/config/sequential_design.h"

namespace lrb::test {

enum class Differences { Normal, HeavyTailed };  // heavy: Student's t with 3 df, scaled to sd 1
enum class Rule { Sequential, NaiveRepeated, Fixed };
const char* rule_name(Rule r);
const char* differences_name(Differences d);

struct SimCounts {
  std::size_t studies = 0, supported = 0, refuted = 0;
  double seeds = 0;  // summed over studies: the seeds each spent on the claim
  double supported_rate() const { return studies ? static_cast<double>(supported) / static_cast<double>(studies) : 0; }
  double mean_seeds() const { return studies ? seeds / static_cast<double>(studies) : 0; }
};

// `effect`: the true mean of Δ minus the claim's threshold, in sd of Δ (0: exactly at the
// threshold, the null a false "supported" comes from). Deterministic for a given `seed`.
SimCounts simulate_claim(Rule rule, const SequentialSeeds& design, Differences kind, double effect, std::size_t studies,
                         std::uint64_t seed);

// A ratio claim "A / B is at most 1" on a positive, skewed figure: per seed A = exp(σ·z),
// B = exp(0.05·z'), z and z' standard normal, so the geometric mean of A / B is exactly the
// bound (the null on the judge's log scale) and A's skewness is 1, 2 and 6.2 at σ = 0.32,
// 0.55 and 1.0 (lognormal times and memory). Sequential: the study's judge; Fixed: the
// fixed design's claims at max seeds. Deterministic for a given `seed`.
SimCounts simulate_lognormal_ratio(Rule rule, const SequentialSeeds& design, double sigma, std::size_t studies,
                                   std::uint64_t seed);

// Clopper–Pearson interval of a binomial proportion k / n.
std::pair<double, double> clopper_pearson(std::size_t k, std::size_t n, double confidence = 0.95);

}  // namespace lrb::test
