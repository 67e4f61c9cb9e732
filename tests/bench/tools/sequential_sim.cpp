// The sequential design's error rate, power and seeds, by simulation (tests/bench/sequential_sim.sh):
// simulated studies of one paired "better" claim judged by lrbench's own judge, against the
// naive rule and the fixed design on the same simulated data. Prints Markdown tables.
//   lrb_sequential_sim [studies per row] [seed]
#include <fmt/format.h>

#include <cstdlib>
#include <string>

#include "tests/support/sequential_sim.h"

using namespace lrb;
using namespace lrb::test;

int main(int argc, char** argv) {
  const std::size_t studies = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 10000;
  const std::uint64_t seed = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 20261202;
  const SequentialSeeds designs[] = {{5, 5, 60}, {2, 1, 20}};

  fmt::print("## Under the null (true Δ exactly at the threshold), {} studies per row, α = 0.05\n\n", studies);
  fmt::print("| design | differences | rule | supported | 95 % interval (Clopper–Pearson) | refuted | mean seeds |\n");
  fmt::print("| --- | --- | --- | ---: | --- | ---: | ---: |\n");
  std::uint64_t s = seed;
  for (const auto& d : designs)
    for (Differences kind : {Differences::Normal, Differences::HeavyTailed}) {
      ++s;
      for (Rule rule : {Rule::Sequential, Rule::NaiveRepeated, Rule::Fixed}) {
        const SimCounts c = simulate_claim(rule, d, kind, 0.0, studies, s);
        const auto [lo, hi] = clopper_pearson(c.supported, c.studies);
        fmt::print("| {} | {} | {} | {:.4f} | [{:.4f}, {:.4f}] | {:.4f} | {:.1f} |\n", d.text(), differences_name(kind), rule_name(rule),
                   c.supported_rate(), lo, hi, static_cast<double>(c.refuted) / static_cast<double>(c.studies), c.mean_seeds());
      }
    }

  fmt::print("\n## Skewed positive figures: a ratio claim A / B ≤ 1 judged on the log scale, {} studies per row\n\n", studies);
  fmt::print("A lognormal (σ below; skewness 1, 2, 6.2), B lognormal with σ 0.05, the geometric mean of A / B at the bound.\n\n");
  fmt::print("| design | σ of ln A | rule | supported | 95 % interval (Clopper–Pearson) | refuted | mean seeds |\n");
  fmt::print("| --- | ---: | --- | ---: | --- | ---: | ---: |\n");
  for (const auto& d : designs)
    for (double sigma : {0.32, 0.55, 1.0}) {
      ++s;
      for (Rule rule : {Rule::Sequential, Rule::Fixed}) {
        const SimCounts c = simulate_lognormal_ratio(rule, d, sigma, studies, s);
        const auto [lo, hi] = clopper_pearson(c.supported, c.studies);
        fmt::print("| {} | {:.2f} | {} | {:.4f} | [{:.4f}, {:.4f}] | {:.4f} | {:.1f} |\n", d.text(), sigma, rule_name(rule), c.supported_rate(),
                   lo, hi, static_cast<double>(c.refuted) / static_cast<double>(c.studies), c.mean_seeds());
      }
    }

  fmt::print("\n## Power and seeds against a fixed design with the same max, normal differences, {} studies per row\n\n", studies);
  fmt::print("| design | effect (Δ / sd) | sequential: supported | sequential: mean seeds | fixed: supported | fixed: seeds |\n");
  fmt::print("| --- | ---: | ---: | ---: | ---: | ---: |\n");
  for (const auto& d : designs)
    for (double effect : {0.2, 0.5, 0.8}) {
      ++s;
      const SimCounts seq = simulate_claim(Rule::Sequential, d, Differences::Normal, effect, studies, s);
      const SimCounts fixed = simulate_claim(Rule::Fixed, d, Differences::Normal, effect, studies, s);
      fmt::print("| {} | {:.1f} | {:.4f} | {:.1f} | {:.4f} | {} |\n", d.text(), effect, seq.supported_rate(), seq.mean_seeds(),
                 fixed.supported_rate(), d.max);
    }
  return 0;
}
