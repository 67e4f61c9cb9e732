#include "suite/stats/paired.h"

#include <cmath>
#include <utility>

#include "suite/core/errors.h"

namespace lrb::stats {

std::vector<double> values_of(const SeedValues& v) {
  std::vector<double> out;
  out.reserve(v.size());
  for (const auto& [seed, value] : v) out.push_back(value);
  return out;
}

SeedPairing pair_by_seed(const SeedValues& a, const SeedValues& b) {
  SeedPairing p;
  for (const auto& [seed, va] : a) {
    const auto it = b.find(seed);
    if (it == b.end()) {
      p.only_a.push_back(seed);
      continue;
    }
    LRB_CHECK(std::isfinite(va) && std::isfinite(it->second), "pair_by_seed: non-finite value");
    p.seeds.push_back(seed);
    p.differences.push_back(va - it->second);
  }
  for (const auto& [seed, vb] : b) {
    if (a.find(seed) == a.end()) p.only_b.push_back(seed);
  }
  return p;
}

PairedComparison compare_paired(const SeedValues& a, const SeedValues& b, const PairedSettings& settings) {
  SeedPairing p = pair_by_seed(a, b);
  BootstrapInterval bootstrap = bootstrap_mean(p.differences, settings.bootstrap);
  return compare_paired(std::move(p), std::move(bootstrap), settings);
}

PairedComparison compare_paired(SeedPairing p, BootstrapInterval bootstrap, const PairedSettings& settings) {
  PairedComparison r;
  r.seeds = std::move(p.seeds);
  r.differences = std::move(p.differences);
  r.only_a = std::move(p.only_a);
  r.only_b = std::move(p.only_b);
  r.n_pairs = r.differences.size();
  const double confidence = settings.bootstrap.confidence;
  r.t = t_test_one_sample(r.differences, confidence);
  r.bootstrap = std::move(bootstrap);
  r.wilcoxon = wilcoxon_signed_rank(r.differences, settings.wilcoxon);
  if (r.n_pairs == 0) return r;

  r.mean_diff = r.t.estimate;
  double wins = 0.0;
  for (double d : r.differences) {
    const double better = settings.higher_is_better ? d : -d;
    wins += better > 0.0 ? 1.0 : better == 0.0 ? 0.5 : 0.0;
  }
  r.prob_improvement = wins / static_cast<double>(r.n_pairs);

  if (r.n_pairs >= 2) {
    r.sd_diff = sample_std(r.differences);
    if (*r.sd_diff > 0.0) {
      r.effect_size = *r.mean_diff / *r.sd_diff;
    } else if (*r.mean_diff == 0.0) {
      r.effect_size = 0.0;
    }
  }
  return r;
}

TTest compare_unpaired(const SeedValues& a, const SeedValues& b, double confidence) {
  return t_test_welch(values_of(a), values_of(b), confidence);
}

}  // namespace lrb::stats
