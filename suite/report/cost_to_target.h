#pragma once
// `lrbench leaderboard --by cost-to-target`: per task and setting, the models ranked by
// their median cost to reach the target (targets.h: runs that never reached it count as
// never, AlgoPerf's rule; equal medians share a rank, as do the models that did not reach
// it, after the rest), with the share that reached it; then a performance profile across the
// tasks (Dolan & Moré 2002): for each model ρ(τ), the share of tasks where its median cost
// is at most τ × the best model's there (never reached: never within).
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lrb {

struct Analysis;

struct CostToTargetEntry {
  std::size_t cell = 0;            // index into Analysis::cells
  std::size_t target = 0;          // index into Analysis::targets
  std::optional<double> median;    // the median cost, where reached and counted
  std::size_t rank = 0;            // 1-based; 0: not ranked (no finished run, or the cost not counted)
  bool shared = false;             // another model has the same rank
};

struct CostToTargetUnit {
  std::size_t unit = 0;  // index into Analysis::units
  std::vector<CostToTargetEntry> entries;  // by rank
  std::optional<double> best;  // the smallest median
};

struct PerformanceProfile {
  std::vector<double> taus;          // 1, 1.25, 1.5, 2, 4, 8
  std::vector<std::string> units;    // the tasks (and settings) profiled
  struct Model {
    std::string entrant;
    std::vector<std::optional<double>> ratios;  // per unit: median / best; none where never within
    std::vector<double> rho;                    // per tau
  };
  std::vector<Model> models;  // best first (ρ at the smallest τ, then the next)
};

struct CostToTarget {
  std::string cost;    // "flops", "seconds", "steps"
  std::string figure;  // its stored figure: target_flops, target_seconds, target_step
  std::vector<CostToTargetUnit> units;
  PerformanceProfile profile;
};

// UserError when no run of the input has a target, or `cost` is none of flops, seconds, steps.
CostToTarget cost_to_target(const Analysis& a, const std::string& cost);

// ρ(τ) of a model at any τ: its share of units within τ × the best.
double profile_share(const PerformanceProfile::Model& m, double tau);

// results/REPORT_SCHEMA.md, "cost_to_target".
nlohmann::json cost_to_target_json(const Analysis& a, const CostToTarget& c);

}  // namespace lrb
