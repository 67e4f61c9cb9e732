#pragma once
// Two models on the same task and setting, paired by seed index (matched seeds see the
// same data in the same order). Differences are A − B per seed over the seeds both ran;
// seeds that ran on one side only are listed, never used.
// JSON keys: n_pairs, mean_diff, ci95 -> t.ci, p_ttest -> t.p_value, p_wilcoxon ->
// wilcoxon.p_value, effect_size, prob_improvement (p_holm / p_bh: multiple_testing.h).
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "suite/stats/bootstrap.h"
#include "suite/stats/t_tests.h"
#include "suite/stats/wilcoxon.h"

namespace lrb::stats {

// seed index -> metric value of one (model, task, setting) cell.
using SeedValues = std::map<std::int64_t, double>;

struct PairedSettings {
  BootstrapSettings bootstrap;  // resamples the per-seed differences
  WilcoxonMethod wilcoxon = WilcoxonMethod::kAuto;
  // Direction of "improvement" for prob_improvement only; the difference is always A − B.
  bool higher_is_better = true;
};

struct PairedComparison {
  std::size_t n_pairs = 0;
  std::vector<std::int64_t> seeds;        // paired seeds, ascending
  std::vector<double> differences;        // A − B, in the order of `seeds`
  std::vector<std::int64_t> only_a;       // seeds A ran and B did not (not used)
  std::vector<std::int64_t> only_b;
  std::optional<double> mean_diff;        // n_pairs >= 1
  std::optional<double> sd_diff;          // n_pairs >= 2
  TTest t;                                // paired t-test: one-sample t on the differences
  BootstrapInterval bootstrap;            // percentile and BCa of the mean difference
  WilcoxonResult wilcoxon;
  // mean Δ / sd Δ (n_pairs >= 2). With sd Δ = 0: 0 when mean Δ = 0, absent otherwise.
  std::optional<double> effect_size;
  // Share of paired seeds where A beats B (ties count ½); n_pairs >= 1.
  std::optional<double> prob_improvement;
};

// The pairing alone: per-seed differences A − B over the seeds both ran.
struct SeedPairing {
  std::vector<std::int64_t> seeds;
  std::vector<double> differences;
  std::vector<std::int64_t> only_a, only_b;
};
SeedPairing pair_by_seed(const SeedValues& a, const SeedValues& b);

PairedComparison compare_paired(const SeedValues& a, const SeedValues& b, const PairedSettings& settings = {});
// The same from the pairing, with the bootstrap of its differences done already
// (bootstrap_means, many comparisons at once); settings.bootstrap is not used.
PairedComparison compare_paired(SeedPairing pairing, BootstrapInterval bootstrap, const PairedSettings& settings = {});

// Unpaired contrast (all of A's values against all of B's, Welch): what one would get
// without using the seed pairing. Shown beside the paired test, never instead of it.
TTest compare_unpaired(const SeedValues& a, const SeedValues& b, double confidence = 0.95);

std::vector<double> values_of(const SeedValues& v);

}  // namespace lrb::stats
