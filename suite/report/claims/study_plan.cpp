#include "suite/report/claims/study_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "suite/config/run_streams.h"
#include "suite/report/claims/claim_sides.h"
#include "suite/report/variance_sources.h"
#include "suite/stats/group_sequential.h"
#include "suite/stats/power.h"
#include "suite/stats/sample_stats.h"
#include "suite/stats/sequential_outlook.h"
#include "suite/stats/ratio.h"
#include "suite/stats/sequential_t.h"
#include "suite/store/run_view.h"

namespace lrb {

namespace {

using namespace claim_sides;

// The per-seed values whose mean the claim tests against 0: Δ − threshold (better,
// not-worse); for a ratio, at the bound r nearest the estimate, ln(A / B) − ln r where
// every value is positive (the judge's log scale), else A − r·B (Fieller's form).
std::optional<std::vector<double>> tested_values(const ClaimResult& r, const std::vector<RunRecord>& runs, std::string& why,
                                                 std::vector<std::int64_t>& replicates) {
  const ClaimSpec& c = r.claim;
  if (c.kind == ClaimKind::Scaling) {
    why = "a scaling claim's power depends on its lengths as much as on its seeds: not planned";
    return std::nullopt;
  }
  if (c.kind == ClaimKind::Variance) {
    why = "a variance claim narrows with the levels of its streams, not with seeds: cross them at more levels ([sweep] vary)";
    return std::nullopt;
  }
  const SideRuns a = collect(c.a, c.metric, runs, "");
  const SideRuns b = collect(c.b, c.metric, runs, "");
  const stats::SeedValues va = by_seed(a), vb = by_seed(b);
  const stats::SeedPairing p = stats::pair_by_seed(va, vb);
  if (p.seeds.size() < 2) {
    why = "fewer than 2 paired seeds: no spread to plan from";
    return std::nullopt;
  }
  std::vector<double> v;
  if (c.kind == ClaimKind::Ratio) {
    if (!r.estimate) {
      why = "no ratio estimate";
      return std::nullopt;
    }
    double bound = 0;
    if (c.at_most && c.at_least) bound = std::fabs(*r.estimate - *c.at_most) < std::fabs(*r.estimate - *c.at_least) ? *c.at_most : *c.at_least;
    else bound = c.at_most ? *c.at_most : *c.at_least;
    // On the scale the judge reads it: the paired log-ratios against ln(bound) where every
    // value is positive, else A − bound·B.
    std::vector<double> a, b;
    for (auto s : p.seeds) {
      a.push_back(va.at(s));
      b.push_back(vb.at(s));
    }
    const bool positive = bound > 0 && stats::all_positive(a, b);
    for (std::size_t i = 0; i < a.size(); ++i) v.push_back(positive ? std::log(a[i] / b[i]) - std::log(bound) : a[i] - bound * b[i]);
    replicates = p.seeds;
  } else {
    const double thr = paired_threshold(c, r.higher_is_better);
    for (auto s : p.seeds) v.push_back(va.at(s) - vb.at(s) - thr);
    replicates = p.seeds;
  }
  return v;
}

// Median wall time of the ok runs of each cell a side selects, summed per seed.
std::optional<double> seconds_per_seed(const ClaimSpec& c, const std::vector<RunRecord>& runs) {
  std::vector<double> ta, tb;
  std::set<std::string> seen;
  for (const auto& r : runs) {
    if (r.status != RunStatus::Ok) continue;
    const bool in_a = c.a.matches(r.spec), in_b = !c.b.match.empty() && c.b.matches(r.spec);
    if (!in_a && !in_b) continue;
    auto it = r.metrics.find("wall_seconds");
    if (it == r.metrics.end() || !std::isfinite(it->second)) continue;
    (in_a ? ta : tb).push_back(it->second);
  }
  if (ta.empty()) return std::nullopt;
  // Two sides reading the same runs under different variants train once per seed.
  const bool same_runs = !c.b.match.empty() && c.a.match == c.b.match;
  double per = stats::median(ta);
  if (!same_runs && c.kind != ClaimKind::Scaling) {
    if (tb.empty()) return std::nullopt;
    per += stats::median(tb);
  }
  return per;
}

// Pairs that cross random streams: the levels of each source 80 % power would take.
void plan_levels(ClaimPlan& p, const std::vector<std::int64_t>& replicates, const std::vector<double>& values, double level,
                 double power) {
  const auto design = crossed_design(replicates, values, 0.95);
  if (!design || !design->components) return;
  const stats::VarianceComponents& v = *design->components;
  const double mean = stats::mean(values);
  for (std::size_t f = 0; f < v.factors.size(); ++f)
    p.levels_by_source.push_back({v.factors[f], v.levels[f], stats::levels_needed(v, f, mean, level, power)});
  p.levels_each = stats::levels_needed_each(v, mean, level, power);
}

int slots_of(const ClaimSpec& c, const std::vector<RunRecord>& runs) {
  int slots = 1;
  for (const auto& r : runs) {
    if (!c.a.matches(r.spec)) continue;
    const int world = r.provenance.value("world_size", 1);
    const int per_run = r.view().ranks_per_run;
    slots = std::max(slots, world / std::max(1, per_run));
  }
  return slots;
}

ClaimPlan plan_dominates(const ClaimResult& r, const SequentialSeeds& design, bool assumed_design, const std::vector<RunRecord>& runs,
                         double level, double power) {
  std::optional<ClaimPlan> chosen;
  const auto need = [](const ClaimPlan& p) { return p.fixed_seeds.value_or(std::numeric_limits<std::size_t>::max()); };
  for (std::size_t h = 0; h < r.halves.size(); ++h) {
    const ClaimResult& half = r.halves[h];
    if (half.verdict != Verdict::Inconclusive) continue;
    const double half_level = h == 0 ? level : half.looks.empty() ? 1.0 - half.confidence : half.looks.back().alpha;
    ClaimPlan p = plan_claim(half, design, assumed_design, runs, half_level, power);
    p.half = h == 0 ? "metric" : "cost";
    if (!chosen || need(p) > need(*chosen)) chosen = std::move(p);
  }
  if (chosen) return *chosen;
  ClaimPlan p;
  p.design = design;
  p.assumed_design = assumed_design;
  p.level = level;
  p.seeds_done = r.n;
  p.why_not = "neither half is inconclusive";
  return p;
}

}  // namespace

ClaimPlan plan_claim(const ClaimResult& r, const SequentialSeeds& design, bool assumed_design, const std::vector<RunRecord>& runs,
                     double level, double power) {
  if (r.claim.kind == ClaimKind::Dominates) return plan_dominates(r, design, assumed_design, runs, level, power);
  ClaimPlan p;
  p.design = design;
  p.assumed_design = assumed_design;
  p.level = level;
  p.seeds_done = r.n;
  p.slots = slots_of(r.claim, runs);
  std::vector<std::int64_t> replicates;
  const auto values = tested_values(r, runs, p.why_not, replicates);
  if (!values) return p;
  plan_levels(p, replicates, *values, level, power);
  const double sd = stats::sample_std(*values);
  if (!(sd > 0)) {
    p.why_not = "no spread between seeds: more seeds change nothing";
    return p;
  }
  p.effect = stats::mean(*values) / sd;
  p.fixed_seeds = stats::paired_t_seeds_needed(*p.effect, level, power);
  // The design's looks at the observed effect and spread, by running its judge over simulated
  // seeds (Student's t at each look: exact at a few seeds, where Z overstates power). A running
  // study goes on from its own seeds and the looks it has made; a pilot, or a study that
  // reached max, is a new study at that effect.
  const std::vector<std::int64_t> looks = design.look_seeds();
  std::vector<double> fractions;
  for (auto n : looks) fractions.push_back(static_cast<double>(n) / static_cast<double>(design.max));
  const stats::SpendingBoundary b = stats::obrien_fleming_boundary(fractions, level);
  // The judge's levels: the boundaries of a t whose variance each look estimates.
  const std::vector<std::size_t> sizes(looks.begin(), looks.end());
  const std::vector<double> nominal = stats::sequential_t_boundary(sizes, b.spent).nominal;
  const stats::SequentialOutlook outlook = stats::sequential_outlook(*values, looks, nominal, assumed_design);
  const double expected = outlook.expected_seeds;
  p.sequential_seeds = expected;
  p.sequential_power = outlook.power;
  p.seconds_per_seed = seconds_per_seed(r.claim, runs);
  if (p.seconds_per_seed) {
    const double done = static_cast<double>(p.seeds_done);
    auto hours = [&](double seeds) { return std::max(0.0, seeds - done) * *p.seconds_per_seed / 3600.0; };
    if (p.fixed_seeds) p.fixed_run_hours = hours(static_cast<double>(*p.fixed_seeds));
    p.sequential_run_hours = hours(expected);
    if (p.fixed_run_hours) p.fixed_wall_hours = *p.fixed_run_hours / p.slots;
    p.sequential_wall_hours = *p.sequential_run_hours / p.slots;
  }
  return p;
}

std::optional<double> seconds_per_seed_of_open_claims(const std::vector<ClaimSpec>& claims, const std::vector<std::size_t>& open,
                                                       const std::vector<RunRecord>& runs) {
  std::map<std::string, std::vector<double>> by_cell;  // a cell: the spec without its seed
  int slots = 1;
  for (const auto& r : runs) {
    if (r.status != RunStatus::Ok) continue;
    const bool read = std::any_of(open.begin(), open.end(), [&](std::size_t c) {
      return claims[c].a.matches(r.spec) || (!claims[c].b.match.empty() && claims[c].b.matches(r.spec));
    });
    auto it = r.metrics.find("wall_seconds");
    if (!read || it == r.metrics.end() || !std::isfinite(it->second)) continue;
    by_cell[without_replicate(r.spec).dump()].push_back(it->second);
    slots = std::max(slots, r.provenance.value("world_size", 1) / std::max(1, r.view().ranks_per_run));
  }
  if (by_cell.empty()) return std::nullopt;
  double total = 0;
  for (auto& [cell, times] : by_cell) total += stats::median(times);
  return total / slots;
}

namespace {
nlohmann::json levels_json(const ClaimPlan& p) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& s : p.levels_by_source)
    out.push_back({{"source", s.source}, {"levels", s.now}, {"needed", s.needed ? nlohmann::json(*s.needed) : nlohmann::json(nullptr)}});
  return out;
}
}  // namespace

nlohmann::json claim_plan_json(const ClaimPlan& p) {
  auto opt = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  return {{"design", p.design.to_json()},
          {"assumed_design", p.assumed_design},
          {"level", p.level},
          {"seeds_done", p.seeds_done},
          {"effect_size", opt(p.effect)},
          {"fixed_seeds_80", opt(p.fixed_seeds)},
          {"sequential_expected_seeds", opt(p.sequential_seeds)},
          {"sequential_power", opt(p.sequential_power)},
          {"seconds_per_seed", opt(p.seconds_per_seed)},
          {"fixed_run_hours", opt(p.fixed_run_hours)},
          {"sequential_run_hours", opt(p.sequential_run_hours)},
          {"slots", p.slots},
          {"fixed_wall_hours", opt(p.fixed_wall_hours)},
          {"sequential_wall_hours", opt(p.sequential_wall_hours)},
          {"why_not", p.why_not.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.why_not)},
          {"half", p.half.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.half)},
          {"levels_by_source", levels_json(p)},
          {"levels_each", opt(p.levels_each)}};
}

}  // namespace lrb
