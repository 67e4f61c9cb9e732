#pragma once
// Claims → verdicts. Each [[claim]] of the sweeps behind a report (DIR/sweep.json) is
// evaluated on the runs found, with the same statistics as the tables:
//   better / not-worse: per-seed differences Δ = A − B over the seeds both ran; a two-sided
//     one-sample t-test of Δ against the claimed threshold, Holm-adjusted over the report's
//     better and not-worse claims; the interval shown is the t interval at the level of the
//     claim's Holm step (1 − α / (m − step + 1)), so "wholly on one side" and "adjusted
//     p ≤ α" agree;
//   ratio: mean(A) / mean(B) over paired seeds, percentile bootstrap interval;
//   scaling: least-squares slope of log(metric) on log(over) over every ok run, t interval.
// Verdicts: supported (the interval lies wholly in the claimed region), refuted (wholly
// outside), inconclusive (it straddles; for better / not-worse with the seeds a study with
// the observed effect and spread would need for 80 % power), not tested (a cell has no
// value: not run, failed, stopped; with the reason).
#include <optional>
#include <string>
#include <vector>

#include "suite/config/claim_spec.h"
#include "suite/stats/bootstrap.h"
#include "suite/stats/sample_stats.h"
#include "suite/store/run_record.h"

namespace lrb {

// NotYetJudged: a running sequential study's claim that no look has tested yet.
enum class Verdict { Supported, Refuted, Inconclusive, NotTested, NotYetJudged };
const char* verdict_name(Verdict v);  // "supported", "refuted", "inconclusive", "not tested", "not yet judged"

struct ClaimSettings {
  double alpha = 0.05;                 // family-wise, over the better / not-worse claims (Holm)
  stats::BootstrapSettings bootstrap;  // ratio intervals; its confidence is that of ratio and scaling claims
  double power = 0.8;                  // for the seeds an inconclusive comparison would need
};

// One look of a sequential study at a claim (sequential_claims.h): what it read, the
// repeated confidence interval at the look's boundary, and what it decided.
struct ClaimLook {
  std::size_t look = 0;                     // 1-based
  std::int64_t seeds = 0;                   // the seeds the look reads (seed indices below it)
  std::size_t n = 0;                        // paired seeds (or points) with values
  std::optional<double> estimate;
  std::optional<stats::Interval> interval;  // the repeated confidence interval
  double confidence = 0;                    // of `interval`: 1 − the look's nominal level
  double alpha = 0;                         // the error the claim held at this look (its Holm share)
  double fraction = 0;                      // information fraction of the look: n / max (1 at the last look)
  std::optional<double> z_boundary;         // the |Z| the look had to reach; none when the look tested nothing
  Verdict verdict = Verdict::Inconclusive;
};

struct ClaimResult {
  ClaimSpec claim;
  bool higher_is_better = true;
  Verdict verdict = Verdict::NotTested;
  std::string why;                       // the reason for not tested / inconclusive, or how it was decided
  std::size_t n = 0;                     // paired seeds (better, not-worse, ratio) or points (scaling)
  std::optional<double> estimate;        // mean Δ, ratio of means, or slope
  std::optional<stats::Interval> interval;
  double confidence = 0.95;              // of `interval`
  std::optional<double> threshold;       // better / not-worse: the Δ the claim must beat
  std::optional<double> p_value, p_holm; // better / not-worse: test of Δ = threshold, and Holm-adjusted
  std::size_t holm_step = 0, family = 0; // better / not-worse: the claim's rank by p (1 = smallest) among `family`
  std::optional<double> sd;              // better / not-worse: sd of Δ
  // Ratio: judged on the paired log-ratios (every value > 0; the estimate is the geometric
  // mean of A / B), not by Fieller's interval of mean(A) / mean(B).
  bool log_ratio = false;
  // A sequential better / not-worse claim decided before its last look: Δ adjusted for having
  // stopped there (median-unbiased given that look; the estimate read there is too large).
  std::optional<double> estimate_adjusted;
  std::optional<std::size_t> seeds_needed;  // inconclusive better / not-worse: paired seeds for `power`
  std::vector<std::string> notes;        // runs without a value, seeds on one side only, lengths dropped
  std::vector<std::int64_t> seeds;       // paired seeds used (better, not-worse, ratio)
  std::vector<double> a_values, b_values;  // A's and B's value at each of `seeds`
  // A sequential design's claims only: every look the claim took part in, and why the study
  // stopped drawing seeds for it ("decided at look 3", "reached max (60 seeds)", ...).
  bool sequential = false;
  std::vector<ClaimLook> looks;
  std::string stopped;
  // A dominates claim: its not-worse half on the metric and its ratio half on the cost, each
  // judged as a claim of that kind; the fields above are the metric half's, the verdict both's.
  std::vector<ClaimResult> halves;
};

// Claims as given (deduplicated by the caller), evaluated on `runs`. A dominates claim is
// judged as its two halves (ClaimSpec::metric_half, cost_half; the metric half joins the
// Holm family), then folded back into one result (fold_halves).
std::vector<ClaimResult> evaluate_claims(const std::vector<ClaimSpec>& claims, const std::vector<RunRecord>& runs,
                                         const ClaimSettings& settings);

// A dominates claim from its halves: supported when both are, refuted when either is, not
// tested when a half is (and none refuted), else inconclusive; the metric half's evidence on top.
ClaimResult fold_halves(const ClaimSpec& claim, ClaimResult metric, ClaimResult cost);

// "Δ = +0.043 [+0.021, +0.065] (98.3 % CI)": the evidence column of a claims table.
std::string claim_evidence(const ClaimResult& r);
// A value of the claim's estimate in its own form: "-6.70 MiB", "+0.0125", "0.627", "1.013".
std::string claim_number(const ClaimResult& r, double v);
// "95 %", "98.3 %", and (near_certain) from 99.95 % on how far from 100: "100 − 0.002 %".
std::string confidence_text(double confidence, bool near_certain = false);

}  // namespace lrb
