#include "suite/report/cost_to_target.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "suite/core/errors.h"
#include "suite/core/text.h"
#include "suite/report/analysis.h"
#include "suite/report/json_values.h"

namespace lrb {
namespace {

const std::map<std::string, std::string>& cost_figures() {
  static const std::map<std::string, std::string> f = {{"flops", "target_flops"}, {"seconds", "target_seconds"}, {"steps", "target_step"}};
  return f;
}

// A unit's models by median cost: equal medians share a rank; those that did not reach the
// target share the rank after the rest; an undefined cost is not ranked.
CostToTargetUnit rank_unit(const Analysis& a, std::size_t unit, const std::vector<std::size_t>& targets, const std::string& cost) {
  CostToTargetUnit u;
  u.unit = unit;
  std::size_t never = 0;
  for (std::size_t k : targets) {
    const TargetSummary& t = a.targets[k];
    CostToTargetEntry e{t.cell, k, median_cost(t, cost), 0, false};
    if (e.median && (!u.best || *e.median < *u.best)) u.best = e.median;
    never += t.finished > 0 && !t.median_reached;
    u.entries.push_back(e);
  }
  std::size_t ranked = 0;
  for (auto& e : u.entries)
    if (e.median) ++ranked;
  for (auto& e : u.entries) {
    const TargetSummary& t = a.targets[e.target];
    if (e.median) {
      e.rank = 1 + static_cast<std::size_t>(std::count_if(u.entries.begin(), u.entries.end(), [&](const CostToTargetEntry& x) {
                 return x.median && *x.median < *e.median;
               }));
      e.shared = std::count_if(u.entries.begin(), u.entries.end(), [&](const CostToTargetEntry& x) { return x.median == e.median; }) > 1;
    } else if (t.finished > 0 && !t.median_reached) {
      e.rank = ranked + 1;
      e.shared = never > 1;
    }
  }
  std::stable_sort(u.entries.begin(), u.entries.end(), [](const CostToTargetEntry& x, const CostToTargetEntry& y) {
    return std::make_tuple(x.rank == 0, x.rank) < std::make_tuple(y.rank == 0, y.rank);
  });
  return u;
}

PerformanceProfile profile_of(const Analysis& a, const std::vector<CostToTargetUnit>& units) {
  PerformanceProfile p;
  p.taus = {1, 1.25, 1.5, 2, 4, 8};
  std::map<std::string, std::size_t> index;
  for (const auto& u : units)
    for (const auto& e : u.entries)
      if (index.emplace(a.cells[e.cell].cell.entrant, p.models.size()).second) p.models.push_back({a.cells[e.cell].cell.entrant, {}, {}});
  for (auto& m : p.models) m.ratios.assign(units.size(), std::nullopt);
  for (std::size_t k = 0; k < units.size(); ++k) {
    p.units.push_back(a.units[units[k].unit].label);
    for (const auto& e : units[k].entries)
      if (e.median && units[k].best && *units[k].best > 0)
        p.models[index.at(a.cells[e.cell].cell.entrant)].ratios[k] = *e.median / *units[k].best;
  }
  for (auto& m : p.models)
    for (double tau : p.taus) m.rho.push_back(profile_share(m, tau));
  std::stable_sort(p.models.begin(), p.models.end(), [](const PerformanceProfile::Model& x, const PerformanceProfile::Model& y) {
    return std::make_pair(x.rho, y.entrant) > std::make_pair(y.rho, x.entrant);
  });
  return p;
}

}  // namespace

double profile_share(const PerformanceProfile::Model& m, double tau) {
  if (m.ratios.empty()) return 0.0;
  const auto within = std::count_if(m.ratios.begin(), m.ratios.end(), [tau](const std::optional<double>& r) { return r && *r <= tau; });
  return static_cast<double>(within) / static_cast<double>(m.ratios.size());
}

CostToTarget cost_to_target(const Analysis& a, const std::string& cost) {
  const auto figure = cost_figures().find(cost);
  if (figure == cost_figures().end())
    throw UserError("--cost " + cost + ": the cost to a target is flops, seconds or steps" + suggestion(cost, {"flops", "seconds", "steps"}));
  if (a.targets.empty())
    throw UserError("--by cost-to-target: no run in " + join(a.sources, ", ") +
                    " has a target (spec train.target, with the figures target_reached, target_step, target_flops and "
                    "target_seconds); give the sweep's [train] a target = { metric = \"accuracy\", value = 0.7 } and run it");
  CostToTarget c{cost, figure->second, {}, {}};
  std::map<std::size_t, std::vector<std::size_t>> by_unit;  // unit -> indices into a.targets
  for (std::size_t k = 0; k < a.targets.size(); ++k) by_unit[a.cells[a.targets[k].cell].unit].push_back(k);
  for (const auto& [unit, targets] : by_unit) c.units.push_back(rank_unit(a, unit, targets, cost));
  c.profile = profile_of(a, c.units);
  return c;
}

nlohmann::json cost_to_target_json(const Analysis& a, const CostToTarget& c) {
  using json = nlohmann::json;
  using json_values::opt;
  json units = json::array();
  for (const auto& u : c.units) {
    json models = json::array();
    for (const auto& e : u.entries) {
      const TargetSummary& t = a.targets[e.target];
      models.push_back({{"entrant", a.cells[e.cell].cell.entrant}, {"cell", e.cell}, {"rank", e.rank ? json(e.rank) : json(nullptr)},
                        {"shared", e.shared}, {"median", opt(e.median)}, {"median_reached", t.median_reached},
                        {"finished", t.finished}, {"reached", t.reached}, {"share", opt(t.share)},
                        {"share_wilson95", opt(t.wilson)}});
    }
    const Unit& unit = a.units[u.unit];
    units.push_back({{"task", unit.task}, {"setting", unit.condition}, {"label", unit.label}, {"best", opt(u.best)}, {"models", models}});
  }
  json models = json::array();
  for (const auto& m : c.profile.models) {
    json ratios = json::array();
    for (const auto& r : m.ratios) ratios.push_back(opt(r));
    models.push_back({{"entrant", m.entrant}, {"ratios", ratios}, {"rho", m.rho}});
  }
  return {{"cost", c.cost},
          {"figure", c.figure},
          {"tasks", units},
          {"profile", {{"taus", c.profile.taus}, {"tasks", c.profile.units}, {"models", models}}}};
}

}  // namespace lrb
