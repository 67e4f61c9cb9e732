#pragma once
// The judge of a sequential study (seeds = { first, step, max }): its claims, look by look,
// from the finished runs alone — the report, `lrbench plan` and the scheduler of `lrbench
// run` call this one function, so one folder always gives the same verdicts and the same
// next seeds.
//
// Look k reads the seeds below n_k (first, first + step, ..., max) and takes place once
// every run the open claims need below n_k has finished (ok or failed). At the look, each
// open claim is tested with its repeated confidence interval (suite/stats/group_sequential.h):
//   better / not-worse: Δ = A − B per paired seed, the t interval at the look's nominal level;
//   ratio: Fieller's interval of mean(A) / mean(B) at that level (a bootstrap cannot reach it);
//   scaling: the log-log slope's t interval at that level;
// with the O'Brien–Fleming-shaped spending of each claim's error over its looks (information
// fraction: its pairs or points over what max seeds would give; the last look spends what is
// left). A claim whose interval lies wholly in (supported) or wholly outside (refuted) the
// claimed region is decided and stops drawing seeds. Holm's procedure across the better and
// not-worse claims is kept in its sequential form (Maurer & Bretz 2013, Statistics in
// Biopharmaceutical Research 5:311-320): each open claim holds α / (claims not yet decided);
// a decision passes its share on, and the look is judged again until nothing changes.
// Ratio and scaling claims hold 1 − the bootstrap confidence each, as in the fixed design.
// Exact figures (a deterministic count on CPU) are decided at the first look, or closed
// there when they tie: more seeds repeat the same count.
#include <vector>

#include "suite/config/sequential_design.h"
#include "suite/report/claims/claims.h"

namespace lrb {

struct StudyJudgement {
  std::vector<ClaimResult> claims;  // in the sweep's order, each with its looks
  WavePlan plan;                    // what the scheduler runs next
  std::vector<std::int64_t> look_seeds;  // n_1 .. n_K
};

StudyJudgement judge_sequential_study(const SequentialSeeds& design, const std::vector<ClaimSpec>& claims,
                                      const std::vector<RunRecord>& runs, bool budget_spent, const ClaimSettings& settings);

}  // namespace lrb
