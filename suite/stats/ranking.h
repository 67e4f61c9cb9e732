#pragma once
// Leaderboards that show tie groups, not a bare order.
//
// Per task: models ordered by mean over their seeds (best first; equal means by name).
// Tie groups, a step-down rule that keeps groups contiguous in that order:
//   1. the best remaining model leads a new group;
//   2. it is compared, paired by seed, with every other remaining model (paired t-test by
//      default); those p-values form one family and are adjusted (Holm by default);
//   3. walking down the order, models join the leader's group while their adjusted p is
//      above alpha (0.05) or undefined (fewer than 2 paired seeds: they cannot be told
//      apart); the first significantly worse model stops the walk and the rule repeats
//      from it.
//   A model below a significantly worse one never joins an earlier group, even if its own
//   test against the leader is not significant (high variance), so a leaderboard never
//   shows a group split by another group. Members of a group share its rank: the
//   position of its first member (1, 1, 1, 4, ...).
//
// Across tasks (every model must have values on every task):
//   - mean rank: average over tasks of the per-task rank by mean (exact ties share the
//     average rank), with a percentile bootstrap interval: seeds are resampled within each
//     task (one draw per task shared by all models, which keeps the pairing; tasks drawn
//     independently), per-task means and ranks recomputed. A model that has none of the
//     drawn seeds keeps its observed mean in that replicate.
//   - normalised score: on each task the model means are mapped to [0, 1] by the lowest
//     and highest model mean (1 = best, also when lower is better); a model's score is
//     the IQM (scipy trim_mean 0.25) of its per-task scores. Tasks where all models have
//     the same mean carry no ordering and are left out. Its interval comes from the same
//     replicates, normalising each replicate by its own means.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "suite/stats/bootstrap.h"
#include "suite/stats/multiple_testing.h"
#include "suite/stats/paired.h"

namespace lrb::stats {

enum class GroupTest { kPairedT, kWilcoxon };

struct RankingSettings {
  bool higher_is_better = true;
  double alpha = 0.05;
  Correction correction = Correction::kHolm;
  GroupTest test = GroupTest::kPairedT;
  BootstrapSettings bootstrap;  // resamples, seed and confidence of the across-task intervals
};

struct RankedModel {
  std::string model;
  std::size_t n = 0;             // seeds with a value
  double mean = 0.0;
  double rank = 0.0;             // position by mean (1 = best), exact ties share the average
  std::size_t group = 0;         // tie group, 1 = the best model's
  std::size_t group_rank = 0;    // the group's shared rank (position of its first member)
  bool leader = false;           // leads its group
  // Against the leader of the step that placed it (absent for leaders).
  std::size_t n_pairs_vs_leader = 0;
  std::optional<double> p_vs_leader;
  std::optional<double> p_adjusted_vs_leader;
};

struct TaskRanking {
  std::string task;
  std::vector<RankedModel> models;  // best first
};

// Every model needs at least one value (UserError otherwise).
TaskRanking rank_task(const std::string& task, const std::map<std::string, SeedValues>& models,
                      const RankingSettings& settings = {});

struct TaskScores {
  std::string task;
  std::map<std::string, SeedValues> models;  // model -> seed -> value
};

struct OverallModel {
  std::string model;
  double mean_rank = 0.0;
  std::optional<Interval> mean_rank_ci;
  std::optional<double> normalised_iqm;      // absent when no task separates the models
  std::optional<Interval> normalised_iqm_ci;
};

struct OverallRanking {
  std::vector<TaskRanking> tasks;     // in input order
  std::vector<OverallModel> models;   // by mean rank, best first (equal by name)
  std::size_t normalised_tasks = 0;   // tasks that entered the normalised score
  std::size_t resamples = 0;
  std::uint64_t seed = 0;
  double confidence = 0.95;
};

OverallRanking rank_across_tasks(const std::vector<TaskScores>& tasks, const RankingSettings& settings = {});

}  // namespace lrb::stats
