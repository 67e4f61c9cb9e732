#pragma once
// What settling an open claim would cost, before it is paid (`lrbench plan`, and the JSON
// report under each open claim): the paired seeds a fixed design needs for 80 % power at
// the observed effect and spread, the seeds a sequential design is expected to spend in all,
// from where the study stands (its judge run over simulated seeds at that effect and spread:
// suite/stats/sequential_outlook.h), and both in
// run-hours and wall time from the measured run times of the claim's cells.
#include <optional>
#include <string>
#include <vector>

#include "suite/config/sequential_design.h"
#include "suite/report/claims/claims.h"

namespace lrb {

struct ClaimPlan {
  SequentialSeeds design;                       // the sequential design planned with
  bool assumed_design = false;                  // a fixed-design pilot: the design was assumed, not the study's
  double level = 0.05;                          // the claim's two-sided error share
  std::size_t seeds_done = 0;                   // paired seeds (or seeds) with values so far
  std::optional<double> effect;                 // (estimate − threshold) / sd, per seed
  std::optional<std::size_t> fixed_seeds;       // a fixed design's seeds for 80 % power
  std::optional<double> sequential_seeds;       // the sequential design's expected seeds in all, from where it stands
  std::optional<double> sequential_power;       // its chance of deciding toward the observed effect by max, from there
  std::optional<double> seconds_per_seed;       // the claim's cells' median run times, summed
  std::optional<double> fixed_run_hours, sequential_run_hours;   // still to spend
  int slots = 1;                                // runs at a time (MPI ranks / ranks per run) the study ran with
  std::optional<double> fixed_wall_hours, sequential_wall_hours;
  std::string why_not;                          // when it cannot be planned (then only seeds_done is set)
  std::string half;                             // a dominates claim: the half planned ("metric", "cost"), the open one needing more seeds
  // Pairs that cross random streams ([sweep] vary): the components of the tested values'
  // variance by source, and how many levels of each source (the others as now), or of every
  // source at once, 80 % power would take (nothing: more than 100,000).
  struct SourceLevels {
    std::string source;
    std::int64_t now = 0;
    std::optional<std::int64_t> needed;
  };
  std::vector<SourceLevels> levels_by_source;
  std::optional<std::int64_t> levels_each;
};

// `level`: the claim's error share (α / open claims in the Holm family). `power`: 0.8. A
// dominates claim is settled when both halves are: its plan is its open half's (`level` is
// its metric half's share; its cost half holds its own), the one needing more seeds.
ClaimPlan plan_claim(const ClaimResult& claim, const SequentialSeeds& design, bool assumed_design,
                     const std::vector<RunRecord>& runs, double level, double power);

nlohmann::json claim_plan_json(const ClaimPlan& p);

// The wall time one more seed of every cell the open claims read costs: the median run time
// of each such cell, summed, over the runs the study ran at once. None without a timed run.
std::optional<double> seconds_per_seed_of_open_claims(const std::vector<ClaimSpec>& claims, const std::vector<std::size_t>& open,
                                                       const std::vector<RunRecord>& runs);

}  // namespace lrb
