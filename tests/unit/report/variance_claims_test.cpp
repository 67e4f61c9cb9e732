// ReportVarianceClaims: a variance claim ([[claim]] kind = "variance") judged on crossed runs:
// the ratio of what two studies of the cell would see, V(of) / V(against), equals the one
// computed from the crossed design's components directly, on A's values or on A − B paired
// on the stream tuple, with its generalized interval deciding the verdict.
#include <gtest/gtest.h>

#include <cmath>

#include "suite/core/seeds.h"
#include "suite/report/analysis.h"
#include "suite/stats/variance_ratio.h"
#include "tests/support/report_inputs.h"
#include "tests/support/report_runs.h"

namespace lrb {
namespace {

// Seeds 0..2 (dropout follows them) x order 0..2 x init 0..2, data fixed, the last fastest:
// values from `init_sd`, `order_sd` and a residual; `skip` leaves one combination out.
struct Crossed {
  std::vector<RunRecord> runs;
  std::vector<double> values;  // seed, order, init order (init fastest)
};
Crossed crossed(const std::string& model, double init_sd, double order_sd, std::uint64_t draw, bool skip = false) {
  Rng rng(draw);
  double init[3], order[3];
  for (auto& x : init) x = init_sd * rng.normal();
  for (auto& x : order) x = order_sd * rng.normal();
  Crossed out;
  for (int s = 0; s < 3; ++s)
    for (int o = 0; o < 3; ++o)
      for (int i = 0; i < 3; ++i) {
        const double v = 0.6 + init[i] + order[o] + 0.002 * rng.normal();
        out.values.push_back(v);
        if (skip && s == 2 && o == 2 && i == 2) continue;
        test::RunDraft d;
        d.model = model;
        d.seed = s;
        d.streams = {{"data", 0}, {"order", o}, {"init", i}};
        d.metrics = {{"eval_accuracy", v}};
        out.runs.push_back(test::make_run(d));
      }
  return out;
}

ClaimSpec variance_claim(std::vector<std::string> of, std::vector<std::string> against, bool with_b) {
  ClaimSpec c;
  c.name = "order-as-much-as-init";
  c.statement = c.source = "constructed";
  c.kind = ClaimKind::Variance;
  c.metric = "eval_accuracy";
  c.of = std::move(of);
  c.against = std::move(against);
  c.at_least = 0.5;
  c.a.match = {{"model.name", "transformer"}};
  c.a.label = "transformer";
  c.a.expected_runs = 27;
  if (with_b) {
    c.b.match = {{"model.name", "linear"}};
    c.b.label = "linear";
    c.b.expected_runs = 27;
  }
  return c;
}

ClaimResult judge(const std::vector<RunRecord>& runs, const ClaimSpec& c) {
  ReportInput in = test::input_of(runs);
  in.claims = {c};
  const Analysis a = analyse(in, test::fast_options());
  EXPECT_EQ(a.claims.size(), 1u);
  return a.claims.at(0);
}

// The design's factors in the report's order (order, init, then dropout, which follows the seed).
double direct_ratio(const std::vector<double>& by_seed_order_init, const std::vector<std::string>& num,
                    const std::vector<std::string>& den) {
  std::vector<double> by_order_init_seed;
  for (int o = 0; o < 3; ++o)
    for (int i = 0; i < 3; ++i)
      for (int s = 0; s < 3; ++s) by_order_init_seed.push_back(by_seed_order_init[static_cast<std::size_t>(s * 9 + o * 3 + i)]);
  const auto v = stats::crossed_variance_components({"order", "init", "dropout"}, {3, 3, 3}, by_order_init_seed);
  return stats::study_variance(v, num) / stats::study_variance(v, den);
}

TEST(ReportVarianceClaims, InitCarryingTheVarianceRefutesOrderAsMuchAsInit) {
  const Crossed t = crossed("transformer", 0.05, 0.002, 3);
  const ClaimResult r = judge(t.runs, variance_claim({"order"}, {"init"}, false));
  ASSERT_TRUE(r.estimate) << r.why;
  EXPECT_EQ(r.n, 27u);
  EXPECT_NEAR(*r.estimate, direct_ratio(t.values, {"order"}, {"init"}), 1e-9);
  ASSERT_TRUE(r.interval);
  EXPECT_LT(r.interval->lo, *r.estimate);
  EXPECT_GT(r.interval->hi, *r.estimate);
  EXPECT_EQ(r.verdict, Verdict::Refuted) << r.why << " " << r.interval->lo << ".." << r.interval->hi;
  EXPECT_NE(claim_evidence(r).find("V(order) / V(init) = "), std::string::npos) << claim_evidence(r);
}

TEST(ReportVarianceClaims, WithBItReadsTheDifferencesOnTheStreamTuple) {
  const Crossed t = crossed("transformer", 0.05, 0.002, 3), l = crossed("linear", 0.01, 0.03, 4);
  std::vector<RunRecord> runs = t.runs;
  runs.insert(runs.end(), l.runs.begin(), l.runs.end());
  std::vector<double> differences;
  for (std::size_t k = 0; k < t.values.size(); ++k) differences.push_back(t.values[k] - l.values[k]);
  const ClaimResult r = judge(runs, variance_claim({"init"}, {}, true));
  ASSERT_TRUE(r.estimate) << r.why;
  EXPECT_EQ(r.n, 27u);
  EXPECT_EQ(r.a_values.size(), 27u);
  EXPECT_NEAR(*r.estimate, direct_ratio(differences, {"init"}, {"order", "init", "dropout"}), 1e-9);
  EXPECT_LT(*r.estimate, direct_ratio(t.values, {"init"}, {"order", "init", "dropout"}));  // B's order effect moves the differences
}

TEST(ReportVarianceClaims, AnIncompleteCrossingIsNotTested) {
  const ClaimResult r = judge(crossed("transformer", 0.05, 0.002, 3, true).runs, variance_claim({"order"}, {"init"}, false));
  EXPECT_EQ(r.verdict, Verdict::NotTested);
  EXPECT_NE(r.why.find("not a complete crossing"), std::string::npos) << r.why;
}

}  // namespace
}  // namespace lrb
