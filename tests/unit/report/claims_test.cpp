// Claims*: verdicts follow from the intervals on constructed values whose answer is known:
// clearly supported, clearly refuted, straddling, and not tested (the claims' validation:
// tests/unit/config/claims_config_test.cpp). The power and ratio statistics behind them are
// checked against statsmodels and SciPy (tests/fixtures/stats/claims_fixtures.json, written
// by make_claims_fixtures.py).
#include <gtest/gtest.h>

#include <algorithm>

#include <cmath>
#include <fstream>
#include <limits>

#include "suite/report/analysis.h"
#include "suite/report/claims/claims.h"
#include "suite/report/report_json.h"
#include "suite/stats/multiple_testing.h"
#include "suite/stats/power.h"
#include "suite/stats/ratio.h"
#include "suite/stats/t_tests.h"
#include "tests/support/report_runs.h"

namespace lrb {
namespace {

using json = nlohmann::json;

// ---------------------------------------------------------------------------------------
// Verdicts on constructed values

RunRecord run_of(const std::string& model, const std::string& attention, int seed, std::map<std::string, double> metrics,
                 std::int64_t seq_len = 64, RunStatus status = RunStatus::Ok, const std::string& error = "") {
  test::RunDraft d;
  d.model = model;
  d.model_options = {{"attention", attention}};
  d.seed = seed;
  d.seq_len = seq_len;
  d.metrics = std::move(metrics);
  d.status = status;
  d.error = error;
  return test::make_run(d);
}

CellSelector side(const std::string& attention, std::optional<std::int64_t> seq_len = 64) {
  CellSelector s;
  s.match = {{"model.name", "transformer"}, {"model.options.attention", attention}};
  if (seq_len) s.match.emplace_back("task.seq_len", *seq_len);
  s.label = "transformer attention=" + attention;
  return s;
}

ClaimSpec paired_claim(const std::string& name, ClaimKind kind, const std::string& metric, double margin = 0) {
  ClaimSpec c;
  c.name = name;
  c.statement = name;
  c.source = "constructed";
  c.kind = kind;
  c.metric = metric;
  c.a = side("softmax");
  c.b = side("linear");
  c.a.expected_runs = c.b.expected_runs = 5;
  c.margin = margin;
  return c;
}

// Five seeds: A = B + delta[s].
std::vector<RunRecord> pair_runs(const std::vector<double>& delta, const std::string& metric = "eval_accuracy", double base = 0.5) {
  std::vector<RunRecord> runs;
  for (int s = 0; s < static_cast<int>(delta.size()); ++s) {
    const double b = base + 0.01 * s;
    runs.push_back(run_of("transformer", "softmax", s, {{metric, b + delta[s]}}));
    runs.push_back(run_of("transformer", "linear", s, {{metric, b}}));
  }
  return runs;
}

ClaimResult only(const std::vector<ClaimSpec>& claims, const std::vector<RunRecord>& runs) {
  const auto r = evaluate_claims(claims, runs, ClaimSettings{});
  EXPECT_EQ(r.size(), 1u);
  return r.at(0);
}

TEST(ClaimsVerdict, BetterClearlyAboveIsSupported) {
  const auto r = only({paired_claim("up", ClaimKind::Better, "eval_accuracy")}, pair_runs({0.050, 0.052, 0.047, 0.051, 0.049}));
  EXPECT_EQ(r.verdict, Verdict::Supported) << r.why;
  EXPECT_EQ(r.n, 5u);
  EXPECT_NEAR(*r.estimate, 0.0498, 1e-12);
  EXPECT_GT(r.interval->lo, 0.0);
  EXPECT_NEAR(r.confidence, 0.95, 1e-12);  // one claim: Holm's only step is α itself
  EXPECT_FALSE(r.seeds_needed);
}

TEST(ClaimsVerdict, BetterClearlyBelowIsRefuted) {
  const auto r = only({paired_claim("down", ClaimKind::Better, "eval_accuracy")}, pair_runs({-0.050, -0.052, -0.047, -0.051, -0.049}));
  EXPECT_EQ(r.verdict, Verdict::Refuted) << r.why;
  EXPECT_LT(r.interval->hi, 0.0);
}

TEST(ClaimsVerdict, StraddlingIsInconclusiveWithTheSeedsAStudyWouldNeed) {
  const std::vector<double> d = {0.020, -0.015, 0.010, -0.020, 0.012};
  const auto r = only({paired_claim("flat", ClaimKind::Better, "eval_accuracy")}, pair_runs(d));
  EXPECT_EQ(r.verdict, Verdict::Inconclusive) << r.why;
  EXPECT_LT(r.interval->lo, 0.0);
  EXPECT_GT(r.interval->hi, 0.0);
  ASSERT_TRUE(r.seeds_needed);
  const double effect = *r.estimate / *r.sd;
  EXPECT_EQ(*r.seeds_needed, *stats::paired_t_seeds_needed(effect, 0.05));
  EXPECT_GT(*r.seeds_needed, 5u);
  EXPECT_LT(stats::paired_t_power(effect, *r.seeds_needed - 1, 0.05), 0.8);
  EXPECT_GE(stats::paired_t_power(effect, *r.seeds_needed, 0.05), 0.8);
}

TEST(ClaimsVerdict, BetterByAMarginTestsAgainstTheMargin) {
  // Δ ≈ 0.05 beats 0 clearly but not a margin of 0.05, and falls clearly short of 0.08.
  const std::vector<double> d = {0.050, 0.052, 0.047, 0.051, 0.049};
  EXPECT_EQ(only({paired_claim("m", ClaimKind::Better, "eval_accuracy", 0.05)}, pair_runs(d)).verdict, Verdict::Inconclusive);
  const auto r = only({paired_claim("m", ClaimKind::Better, "eval_accuracy", 0.08)}, pair_runs(d));
  EXPECT_EQ(r.verdict, Verdict::Refuted);
  EXPECT_DOUBLE_EQ(*r.threshold, 0.08);
}

TEST(ClaimsVerdict, NotWorseWithinTheMarginIsSupported) {
  const std::vector<double> d = {-0.005, -0.004, -0.006, -0.003, -0.005};
  EXPECT_EQ(only({paired_claim("nw", ClaimKind::NotWorse, "eval_accuracy", 0.02)}, pair_runs(d)).verdict, Verdict::Supported);
  // The same values as "better" are refuted: A is slightly but surely worse.
  EXPECT_EQ(only({paired_claim("b", ClaimKind::Better, "eval_accuracy")}, pair_runs(d)).verdict, Verdict::Refuted);
}

TEST(ClaimsVerdict, AnExactFigureExactlyOnTheThresholdDecidesByTheClaimsWords) {
  // Equal parameter counts: "A has fewer" is a tie, not better (refuted). A byte count exactly
  // at the margin is not worse by more than the margin (supported). More seeds never change
  // either, so "inconclusive" would never end.
  std::vector<RunRecord> runs;
  for (int s = 0; s < 3; ++s) {
    runs.push_back(run_of("transformer", "softmax", s, {{"params", 1000.0}, {"peak_bytes", 1100.0}, {"eval_accuracy", 0.8}}));
    runs.push_back(run_of("transformer", "linear", s, {{"params", 1000.0}, {"peak_bytes", 1000.0}, {"eval_accuracy", 0.8}}));
  }
  const auto tie = only({paired_claim("fewer", ClaimKind::Better, "params")}, runs);
  EXPECT_EQ(tie.verdict, Verdict::Refuted) << tie.why;
  ASSERT_TRUE(tie.threshold);
  EXPECT_FALSE(std::signbit(*tie.threshold)) << "a zero threshold is +0 (the JSON showed -0.0)";
  const auto edge = only({paired_claim("near", ClaimKind::NotWorse, "peak_bytes", 100.0)}, runs);
  EXPECT_EQ(edge.verdict, Verdict::Supported) << edge.why;
  EXPECT_EQ(edge.claim.claimed_text(false), "A − B ≤ 100");
  // A sampled metric tied on every seed stays open: more seeds will show its spread.
  const auto acc = only({paired_claim("acc", ClaimKind::Better, "eval_accuracy")}, runs);
  EXPECT_EQ(acc.verdict, Verdict::Inconclusive) << acc.why;
}

// Issue 66 item 4: equal accuracies on every seed put "not worse by 2 points" 2 points clear
// of its threshold with no spread, and a t test of no spread says p = 0 (supported). Ties of
// a sampled figure are no evidence; ties of an exact count are the figure.
TEST(ClaimsVerdict, TiesOnASampledFigureDecideNothingTiesOfAnExactCountDo) {
  const auto tie = only({paired_claim("tie", ClaimKind::NotWorse, "eval_accuracy", 0.02)}, pair_runs({0, 0, 0, 0, 0}));
  EXPECT_EQ(tie.verdict, Verdict::Inconclusive) << tie.why;
  EXPECT_NE(tie.why.find("no spread"), std::string::npos) << tie.why;
  EXPECT_FALSE(tie.p_value);
  std::vector<RunRecord> runs;
  for (int s = 0; s < 5; ++s) {
    runs.push_back(run_of("transformer", "softmax", s, {{"params", 1000.0}}));
    runs.push_back(run_of("transformer", "linear", s, {{"params", 1000.0}}));
  }
  EXPECT_EQ(only({paired_claim("tie", ClaimKind::NotWorse, "params", 10)}, runs).verdict, Verdict::Supported);
}

// Issue 66 item 5: a figure the catalogue counts exactly but whose values move with the seed
// (step bytes varying by 1 %, the same on both sides) was taken as exact: its constant
// difference, 10 clear of the threshold, was decided. It is judged as sampled, and says so.
TEST(ClaimsVerdict, AnExactFigureThatVariesAcrossSeedsIsJudgedAsSampledAndSaysSo) {
  std::vector<RunRecord> runs;
  for (int s = 0; s < 5; ++s) {
    const double bytes = 1e6 * (1.0 + 0.01 * (s % 2 ? s : -s));
    runs.push_back(run_of("transformer", "softmax", s, {{"peak_step_bytes", bytes}}));
    runs.push_back(run_of("transformer", "linear", s, {{"peak_step_bytes", bytes}}));
  }
  const auto r = only({paired_claim("near", ClaimKind::NotWorse, "peak_step_bytes", 10)}, runs);
  EXPECT_EQ(r.verdict, Verdict::Inconclusive) << r.why;
  EXPECT_NE(std::find_if(r.notes.begin(), r.notes.end(), [](const std::string& n) { return n.find("judged as a sampled") != std::string::npos; }),
            r.notes.end());
}

TEST(ClaimsVerdict, AHugeMarginIsJudgedNeverAnAbort) {
  // 1e15, the largest margin validation accepts, against accuracies: far short of it.
  const auto r = only({paired_claim("huge", ClaimKind::Better, "eval_accuracy", 1e15)}, pair_runs({0.05, 0.052, 0.047, 0.051, 0.049}));
  EXPECT_EQ(r.verdict, Verdict::Refuted) << r.why;
  // Values whose differences overflow a double: undefined, said so.
  std::vector<RunRecord> runs;
  for (int s = 0; s < 3; ++s) {
    runs.push_back(run_of("transformer", "softmax", s, {{"eval_accuracy", 1.7e308}}));
    runs.push_back(run_of("transformer", "linear", s, {{"eval_accuracy", -1.7e308 + s}}));
  }
  const auto inf = only({paired_claim("inf", ClaimKind::Better, "eval_accuracy")}, runs);
  EXPECT_EQ(inf.verdict, Verdict::Inconclusive);
  EXPECT_NE(inf.why.find("overflow"), std::string::npos) << inf.why;
  EXPECT_EQ(stats::t_two_sided_p(std::numeric_limits<double>::infinity(), 4), 0.0);
  EXPECT_EQ(stats::t_two_sided_p(-std::numeric_limits<double>::infinity(), 4), 0.0);
}

TEST(ClaimsVerdict, LowerIsBetterMetricsFlipTheClaimedSide) {
  // A uses 30 % less memory: "A better than B" on peak_bytes is supported.
  std::vector<RunRecord> runs;
  for (int s = 0; s < 4; ++s) {
    runs.push_back(run_of("transformer", "softmax", s, {{"peak_bytes", 700.0 + s}}));
    runs.push_back(run_of("transformer", "linear", s, {{"peak_bytes", 1000.0 + 2 * s}}));
  }
  const auto r = only({paired_claim("mem", ClaimKind::Better, "peak_bytes")}, runs);
  EXPECT_FALSE(r.higher_is_better);
  EXPECT_EQ(r.verdict, Verdict::Supported) << r.why;
  EXPECT_EQ(r.claim.claimed_text(false), "A − B < 0");
}

TEST(ClaimsVerdict, HolmAcrossClaimsSetsEachIntervalsLevel) {
  // Three claims on three metrics of the same runs: p-values adjusted together.
  std::vector<RunRecord> runs;
  const double a[] = {0.05, 0.02, 0.04, 0.03, 0.06};
  for (int s = 0; s < 5; ++s) {
    runs.push_back(run_of("transformer", "softmax", s, {{"eval_accuracy", 0.5 + a[s]}, {"eval_macro_f1", 0.5 + a[s] / 10 + (s % 2 ? 0.004 : -0.004)}, {"eval_top3", 0.5 + 0.001 * (s - 2)}}));
    runs.push_back(run_of("transformer", "linear", s, {{"eval_accuracy", 0.5}, {"eval_macro_f1", 0.5}, {"eval_top3", 0.5}}));
  }
  std::vector<ClaimSpec> claims = {paired_claim("acc", ClaimKind::Better, "eval_accuracy"),
                                   paired_claim("f1", ClaimKind::Better, "eval_macro_f1"),
                                   paired_claim("top3", ClaimKind::Better, "eval_top3")};
  const auto r = evaluate_claims(claims, runs, ClaimSettings{});
  std::vector<double> raw;
  for (const auto& c : r) raw.push_back(*c.p_value);
  const auto holm = stats::holm(raw);
  for (std::size_t k = 0; k < r.size(); ++k) {
    EXPECT_EQ(r[k].family, 3u);
    EXPECT_DOUBLE_EQ(*r[k].p_holm, holm[k]);
    EXPECT_NEAR(r[k].confidence, 1.0 - 0.05 / static_cast<double>(3 - r[k].holm_step + 1), 1e-12);
    // The verdict and the interval agree: decided exactly when the interval excludes 0.
    const bool excludes = r[k].interval->lo > 0 || r[k].interval->hi < 0;
    EXPECT_EQ(r[k].verdict != Verdict::Inconclusive, excludes && *r[k].p_holm <= 0.05) << r[k].claim.name;
  }
  EXPECT_EQ(r[0].verdict, Verdict::Supported);
  EXPECT_EQ(r[0].holm_step, 1u);
  EXPECT_EQ(r[2].verdict, Verdict::Inconclusive);
}

TEST(ClaimsVerdict, FailedCellIsNotTestedWithTheReason) {
  std::vector<RunRecord> runs;
  for (int s = 0; s < 3; ++s) {
    runs.push_back(run_of("transformer", "softmax", s, {{"eval_accuracy", 0.6}}));
    runs.push_back(run_of("transformer", "linear", s, {}, 64, RunStatus::Failed, "memory budget exceeded"));
  }
  const auto r = only({paired_claim("x", ClaimKind::Better, "eval_accuracy")}, runs);
  EXPECT_EQ(r.verdict, Verdict::NotTested);
  EXPECT_NE(r.why.find("B (transformer attention=linear) has no run with a value"), std::string::npos) << r.why;
  bool reason = false;
  for (const auto& n : r.notes) reason = reason || n.find("failed: memory budget exceeded") != std::string::npos;
  EXPECT_TRUE(reason);
  // Nothing at all in the results: not tested either, and said so.
  const auto none = only({paired_claim("y", ClaimKind::Better, "eval_accuracy")}, {});
  EXPECT_EQ(none.verdict, Verdict::NotTested);
  EXPECT_NE(none.why.find("none of its runs is in the results"), std::string::npos);
}

TEST(ClaimsVerdict, OnePairedSeedIsInconclusive) {
  const auto r = only({paired_claim("one", ClaimKind::Better, "eval_accuracy")}, pair_runs({0.1}));
  EXPECT_EQ(r.verdict, Verdict::Inconclusive);
  EXPECT_FALSE(r.interval);
  EXPECT_NE(r.why.find("at least 2"), std::string::npos);
}

ClaimSpec ratio_claim(std::optional<double> at_least, std::optional<double> at_most) {
  ClaimSpec c = paired_claim("ratio", ClaimKind::Ratio, "peak_bytes");
  c.at_least = at_least;
  c.at_most = at_most;
  return c;
}

// Positive values: the geometric mean of A / B with the paired log-ratios' t interval; a
// value that is not positive: Fieller's interval of mean(A) / mean(B).
TEST(ClaimsVerdict, RatioOnTheLogScaleOrFromFiellersInterval) {
  std::vector<RunRecord> exact, noisy;
  const double noise[] = {0.9, 1.15, 0.8, 1.2, 0.95};
  for (int s = 0; s < 5; ++s) {
    exact.push_back(run_of("transformer", "softmax", s, {{"peak_bytes", 630.0 * (1 + 0.01 * s)}}));
    exact.push_back(run_of("transformer", "linear", s, {{"peak_bytes", 1000.0 * (1 + 0.01 * s)}}));
    noisy.push_back(run_of("transformer", "softmax", s, {{"peak_bytes", 630.0 * noise[s]}}));
    noisy.push_back(run_of("transformer", "linear", s, {{"peak_bytes", 1000.0}}));
  }
  EXPECT_EQ(only({ratio_claim(std::nullopt, 0.7)}, exact).verdict, Verdict::Supported);  // memory −37 %: at most 0.7
  EXPECT_EQ(only({ratio_claim(std::nullopt, 0.6)}, exact).verdict, Verdict::Refuted);
  EXPECT_EQ(only({ratio_claim(0.62, 0.64)}, exact).verdict, Verdict::Supported);
  const auto r = only({ratio_claim(std::nullopt, 0.63)}, noisy);
  EXPECT_EQ(r.verdict, Verdict::Inconclusive) << r.why;
  EXPECT_TRUE(r.log_ratio);
  double log_sum = 0;
  for (double v : noise) log_sum += std::log(v);
  EXPECT_NEAR(*r.estimate, 0.63 * std::exp(log_sum / 5), 1e-12) << "the geometric mean of the ratios";
  EXPECT_LT(r.interval->lo, 0.63);
  EXPECT_GT(r.interval->hi, 0.63);
  EXPECT_NE(claim_evidence(r).find("log-ratio t"), std::string::npos) << claim_evidence(r);
  // One value at 0: no log; Fieller's interval, the estimate the ratio of the means.
  noisy[0].metrics["peak_bytes"] = 0;
  const auto f = only({ratio_claim(std::nullopt, 0.63)}, noisy);
  EXPECT_FALSE(f.log_ratio);
  EXPECT_NEAR(*f.estimate, 630.0 * (0 + 1.15 + 0.8 + 1.2 + 0.95) / 5000.0, 1e-12);
  EXPECT_NE(claim_evidence(f).find("Fieller"), std::string::npos) << claim_evidence(f);
}

TEST(ClaimsVerdict, ARatioFromTwoSeedsIsNotDecidedByABootstrapWithThreePossibleMeans) {
  // A / B = 1.0426 on two seeds (1.0435 the ratio of the means): the percentile bootstrap's [1, 1.087] said "supported"
  // for A / B ≥ 1; an interval valid at n = 2 cannot tell.
  std::vector<RunRecord> runs;
  const double a[] = {1.0, 1.087};
  for (int s = 0; s < 2; ++s) {
    runs.push_back(run_of("transformer", "softmax", s, {{"eval_accuracy", 0.5 * a[s]}}));
    runs.push_back(run_of("transformer", "linear", s, {{"eval_accuracy", 0.5}}));
  }
  ClaimSpec c = ratio_claim(1.0, std::nullopt);
  c.metric = "eval_accuracy";
  const auto r = only({c}, runs);
  EXPECT_NEAR(*r.estimate, std::sqrt(1.087), 1e-12) << "the geometric mean of 1 and 1.087";
  EXPECT_EQ(r.verdict, Verdict::Inconclusive) << r.why;
  ASSERT_TRUE(r.interval);
  EXPECT_LT(r.interval->lo, 1.0);
}

ClaimSpec scaling_claim(double lo, double hi, std::vector<double> expected) {
  ClaimSpec c;
  c.name = "scaling";
  c.statement = "scales";
  c.source = "constructed";
  c.kind = ClaimKind::Scaling;
  c.metric = "peak_bytes";
  c.a = side("linear", std::nullopt);
  c.a.expected_over = std::move(expected);
  c.over = "task.seq_len";
  c.slope_lo = lo;
  c.slope_hi = hi;
  return c;
}

std::vector<RunRecord> scaling_runs(double slope, double noise, const std::vector<std::int64_t>& lengths) {
  std::vector<RunRecord> runs;
  for (std::int64_t n : lengths)
    for (int s = 0; s < 2; ++s) {
      const double wobble = 1.0 + noise * ((n / 1024 + s) % 3 - 1);
      runs.push_back(run_of("transformer", "linear", s, {{"peak_bytes", 1e3 * std::pow(static_cast<double>(n), slope) * wobble}}, n));
    }
  return runs;
}

TEST(ClaimsVerdict, ScalingFromTheSlopeInterval) {
  const std::vector<std::int64_t> lengths = {1024, 2048, 4096, 8192};
  const std::vector<double> expected = {1024, 2048, 4096, 8192};
  const auto linear = scaling_runs(1.0, 0.01, lengths);
  const auto supported = only({scaling_claim(0.9, 1.1, expected)}, linear);
  EXPECT_EQ(supported.verdict, Verdict::Supported) << supported.why;
  EXPECT_NEAR(*supported.estimate, 1.0, 0.02);
  EXPECT_EQ(supported.n, 8u);
  EXPECT_EQ(only({scaling_claim(-0.1, 0.1, expected)}, linear).verdict, Verdict::Refuted);  // "memory does not grow with N"
  const auto noisy = only({scaling_claim(0.98, 1.02, expected)}, scaling_runs(1.0, 0.3, lengths));
  EXPECT_EQ(noisy.verdict, Verdict::Inconclusive) << noisy.why;
}

TEST(ClaimsVerdict, ScalingWithAFailedLengthIsNotTested) {
  auto runs = scaling_runs(1.0, 0.01, {1024, 2048, 4096, 8192});
  for (int s = 0; s < 2; ++s) runs.push_back(run_of("transformer", "linear", s, {}, 16384, RunStatus::Failed, "out of memory"));
  const auto r = only({scaling_claim(0.9, 1.1, {1024, 2048, 4096, 8192, 16384})}, runs);
  EXPECT_EQ(r.verdict, Verdict::NotTested);
  EXPECT_NE(r.why.find("seq_len=16384"), std::string::npos) << r.why;
}

// ---------------------------------------------------------------------------------------
// Dominates: A not worse on accuracy within the margin, and cheaper by the factor

ClaimSpec dominates_claim(double margin = 0.01, double factor = 2) {
  ClaimSpec c = paired_claim("dominates", ClaimKind::Dominates, "eval_accuracy", margin);
  c.cost = "train_flops";
  c.factor = factor;
  return c;
}

// Five seeds: A = B + delta[s] on accuracy; training FLOPs exact (the same on every seed).
std::vector<RunRecord> dominates_runs(const std::vector<double>& delta, double flops_a, double flops_b) {
  std::vector<RunRecord> runs;
  for (int s = 0; s < static_cast<int>(delta.size()); ++s) {
    const double b = 0.5 + 0.01 * s;
    runs.push_back(run_of("transformer", "softmax", s, {{"eval_accuracy", b + delta[s]}, {"train_flops", flops_a}}));
    runs.push_back(run_of("transformer", "linear", s, {{"eval_accuracy", b}, {"train_flops", flops_b}}));
  }
  return runs;
}

const std::vector<double> kAsGood = {0.001, 0.002, 0.0, 0.001, 0.0015};

TEST(ClaimsDominates, BothHalvesSupportedIsSupported) {
  const auto r = only({dominates_claim()}, dominates_runs(kAsGood, 1e12, 4e12));
  EXPECT_EQ(r.verdict, Verdict::Supported) << r.why;
  ASSERT_EQ(r.halves.size(), 2u);
  EXPECT_EQ(r.halves[0].claim.kind, ClaimKind::NotWorse);
  EXPECT_EQ(r.halves[0].verdict, Verdict::Supported);
  EXPECT_DOUBLE_EQ(*r.halves[0].threshold, -0.01);
  EXPECT_EQ(r.halves[1].claim.kind, ClaimKind::Ratio);
  EXPECT_EQ(r.halves[1].verdict, Verdict::Supported);
  EXPECT_DOUBLE_EQ(*r.halves[1].estimate, 0.25);
  EXPECT_DOUBLE_EQ(*r.halves[1].claim.at_most, 0.5);
  EXPECT_EQ(r.halves[1].interval->lo, r.halves[1].interval->hi) << "an exact cost: its ratio without spread";
  // The top-level evidence is the metric half's; the evidence column shows both.
  EXPECT_NEAR(*r.estimate, 0.0011, 1e-12);
  const std::string ev = claim_evidence(r);
  EXPECT_NE(ev.find("Δ = "), std::string::npos) << ev;
  EXPECT_NE(ev.find("; cost A / B = 0.25"), std::string::npos) << ev;
  EXPECT_EQ(r.claim.claimed_text(true), "A − B ≥ -0.01 and cost A / B ≤ 0.5");
}

TEST(ClaimsDominates, EitherHalfRefutedIsRefuted) {
  // Clearly worse on accuracy, though cheaper.
  const auto worse = only({dominates_claim()}, dominates_runs({-0.05, -0.052, -0.047, -0.051, -0.049}, 1e12, 4e12));
  EXPECT_EQ(worse.verdict, Verdict::Refuted) << worse.why;
  EXPECT_EQ(worse.halves[0].verdict, Verdict::Refuted);
  EXPECT_EQ(worse.halves[1].verdict, Verdict::Supported);
  // As good, but only 25 % cheaper where the claim says half.
  const auto dear = only({dominates_claim()}, dominates_runs(kAsGood, 3e12, 4e12));
  EXPECT_EQ(dear.verdict, Verdict::Refuted) << dear.why;
  EXPECT_EQ(dear.halves[0].verdict, Verdict::Supported);
  EXPECT_EQ(dear.halves[1].verdict, Verdict::Refuted);
  EXPECT_NE(dear.why.find("cost half refuted"), std::string::npos) << dear.why;
}

TEST(ClaimsDominates, AnOpenHalfLeavesItInconclusiveAndTheMetricHalfJoinsHolm) {
  const std::vector<double> straddle = {0.0, -0.03, 0.01, -0.025, 0.005};
  std::vector<ClaimSpec> claims = {dominates_claim(), paired_claim("acc", ClaimKind::Better, "eval_accuracy")};
  const auto r = evaluate_claims(claims, dominates_runs(straddle, 1e12, 4e12), ClaimSettings{});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].verdict, Verdict::Inconclusive) << r[0].why;
  EXPECT_EQ(r[0].halves[0].verdict, Verdict::Inconclusive);
  EXPECT_EQ(r[0].halves[1].verdict, Verdict::Supported);
  EXPECT_EQ(r[0].halves[0].family, 2u) << "the not-worse half and the better claim form one Holm family";
  EXPECT_EQ(r[1].family, 2u);
  // A side without values: not tested, with the reason.
  std::vector<RunRecord> failed = dominates_runs(kAsGood, 1e12, 4e12);
  for (auto& run : failed)
    if (run.spec.at("model").at("options").at("attention") == "linear") run.status = RunStatus::Failed;
  const auto nt = only({dominates_claim()}, failed);
  EXPECT_EQ(nt.verdict, Verdict::NotTested) << nt.why;
}

TEST(ClaimsDominates, JsonAndPlanCarryBothHalves) {
  const std::vector<double> straddle = {0.0, -0.03, 0.01, -0.025, 0.005};
  const ClaimSpec c = dominates_claim();
  const ClaimSpec back = ClaimSpec::from_json(c.to_json());
  EXPECT_EQ(back.kind, ClaimKind::Dominates);
  EXPECT_EQ(back.cost, "train_flops");
  EXPECT_DOUBLE_EQ(back.factor, 2.0);
  EXPECT_DOUBLE_EQ(back.margin, 0.01);
  ReportInput in;
  in.runs = dominates_runs(straddle, 1e12, 4e12);
  in.claims = {c};
  ReportOptions o;
  o.bootstrap.resamples = 500;
  const Analysis a = analyse(in, o);
  ASSERT_EQ(a.plans.count(0), 1u) << "an inconclusive dominates claim is planned";
  EXPECT_EQ(a.plans.at(0).half, "metric") << "the open half";
  EXPECT_TRUE(a.plans.at(0).fixed_seeds);
  const json j = report_json(a, "report").at("claims").at(0);
  EXPECT_EQ(j.at("kind"), "dominates");
  EXPECT_EQ(j.at("cost"), "train_flops");
  ASSERT_EQ(j.at("halves").size(), 2u);
  EXPECT_EQ(j.at("halves")[0].at("kind"), "not-worse");
  EXPECT_EQ(j.at("halves")[1].at("kind"), "ratio");
  EXPECT_EQ(j.at("halves")[1].at("verdict"), "supported");
  EXPECT_EQ(j.at("plan").at("half"), "metric");
}

// ---------------------------------------------------------------------------------------
// The statistics, against statsmodels and SciPy

const json& fixtures() {
  static const json j = [] {
    std::ifstream in(std::string(LRB_FIXTURES_DIR) + "/stats/claims_fixtures.json");
    if (!in) throw std::runtime_error("cannot open claims_fixtures.json");
    return json::parse(in);
  }();
  return j;
}

TEST(ClaimsStats, PowerMatchesStatsmodels) {
  for (const auto& c : fixtures().at("power")) {
    const double p = stats::paired_t_power(c.at("effect"), c.at("n"), c.at("alpha"));
    EXPECT_NEAR(p, c.at("power").get<double>(), 1e-9) << c.dump();
  }
}

TEST(ClaimsStats, SeedsNeededMatchStatsmodels) {
  for (const auto& c : fixtures().at("seeds_needed")) {
    const auto n = stats::paired_t_seeds_needed(c.at("effect"), c.at("alpha"), 0.8);
    ASSERT_TRUE(n) << c.dump();
    EXPECT_EQ(*n, c.at("n").get<std::size_t>()) << c.dump();
  }
  EXPECT_FALSE(stats::paired_t_seeds_needed(0.0, 0.05));
  EXPECT_FALSE(stats::paired_t_seeds_needed(1e-4, 0.05, 0.8, 1000));  // beyond the cap
}

TEST(ClaimsStats, RatioIntervalOnAFixedResampleSetMatchesNumpy) {
  for (const auto& c : fixtures().at("ratio_exact")) {
    const auto a = c.at("a").get<std::vector<double>>(), b = c.at("b").get<std::vector<double>>();
    stats::ResampleSet set;
    set.n = a.size();
    for (const auto& row : c.at("indices")) {
      for (const auto& i : row) set.indices.push_back(i.get<std::uint32_t>());
      ++set.count;
    }
    const auto r = stats::ratio_of_means(a, b, set);
    ASSERT_TRUE(r.percentile);
    EXPECT_NEAR(r.percentile->lo, c.at("percentile95")[0].get<double>(), 1e-12);
    EXPECT_NEAR(r.percentile->hi, c.at("percentile95")[1].get<double>(), 1e-12);
  }
}

TEST(ClaimsStats, RatioIntervalWithinMonteCarloToleranceOfScipy) {
  for (const auto& c : fixtures().at("ratio_mc")) {
    const auto a = c.at("a").get<std::vector<double>>(), b = c.at("b").get<std::vector<double>>();
    stats::BootstrapSettings s;
    s.resamples = 20000;
    const auto r = stats::ratio_of_means(a, b, s);
    EXPECT_NEAR(*r.ratio, c.at("ratio").get<double>(), 1e-12);
    // Both are Monte-Carlo estimates of the same quantiles: within a fraction of the bootstrap SE.
    const double se = c.at("standard_error");
    // With 5 seeds the resample ratios take few values, and a quantile sits on a jump
    // between two of them: a looser bound there.
    const double tolerance = (a.size() < 8 ? 0.3 : 0.1) * se;
    EXPECT_NEAR(r.percentile->lo, c.at("percentile95")[0].get<double>(), tolerance);
    EXPECT_NEAR(r.percentile->hi, c.at("percentile95")[1].get<double>(), tolerance);
  }
}

}  // namespace
}  // namespace lrb

namespace lrb {
namespace {

TEST(ClaimsVerdictExact, OneSeedOfAnExactCountIsTheFigure) {
  // The largest batch in a budget is a deterministic count on CPU: one seed decides.
  test::RunDraft a, b;
  a.model = b.model = "maelre";
  a.seq_len = 2048;
  b.seq_len = 4096;
  a.metrics = {{"max_batch_in_budget", 324}};
  b.metrics = {{"max_batch_in_budget", 158}};
  const std::vector<RunRecord> runs = {test::make_run(a), test::make_run(b)};
  ClaimSpec c;
  c.name = "halves";
  c.kind = ClaimKind::Ratio;
  c.metric = "max_batch_in_budget";
  c.a.match = {{"model.name", "maelre"}, {"task.seq_len", 2048}};
  c.b.match = {{"model.name", "maelre"}, {"task.seq_len", 4096}};
  c.at_least = 1.8;
  c.at_most = 2.2;
  auto r = evaluate_claims({c}, runs, ClaimSettings{});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].verdict, Verdict::Supported) << r[0].why;
  EXPECT_NEAR(*r[0].estimate, 324.0 / 158.0, 1e-12);
  EXPECT_EQ(r[0].interval->lo, r[0].interval->hi);
  c.at_most = 2.0;
  EXPECT_EQ(evaluate_claims({c}, runs, ClaimSettings{})[0].verdict, Verdict::Refuted);
  // Accuracy is not an exact figure: one seed stays inconclusive.
  c.metric = "eval_accuracy";
  const std::vector<RunRecord> acc = {test::make_run([&] { auto d = a; d.metrics = {{"eval_accuracy", 0.8}}; return d; }()),
                                      test::make_run([&] { auto d = b; d.metrics = {{"eval_accuracy", 0.4}}; return d; }())};
  EXPECT_EQ(evaluate_claims({c}, acc, ClaimSettings{})[0].verdict, Verdict::Inconclusive);
}

}  // namespace
}  // namespace lrb
