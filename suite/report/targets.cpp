#include "suite/report/targets.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "suite/report/analysis.h"
#include "suite/report/json_values.h"
#include "suite/stats/proportion.h"

namespace lrb {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

// numpy's median of the finished runs' costs, never-reached as +inf: undefined (absent)
// where it lands on a never, or on a reached run without the figure.
std::optional<double> median_to_target(const std::vector<TargetOutcome>& runs, std::optional<double> TargetOutcome::*cost) {
  std::vector<double> v;
  for (const auto& r : runs) {
    if (r.status == "stopped") continue;
    if (r.status != "reached") {
      v.push_back(kNever);
      continue;
    }
    if (!(r.*cost)) return std::nullopt;
    v.push_back(*(r.*cost));
  }
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  const double m = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
  if (std::isinf(m)) return std::nullopt;
  return m;
}

}  // namespace

TargetSummary summarise_target(const Cell& cell, std::size_t index, double confidence) {
  TargetSummary t;
  t.cell = index;
  for (const auto& r : cell.target_runs) {
    ++t.runs;
    if (r.status == "stopped") {
      ++t.stopped;
      continue;
    }
    ++t.finished;
    t.failed += r.status == "failed";
    t.reached += r.status == "reached";
  }
  if (t.finished > 0) t.share = static_cast<double>(t.reached) / static_cast<double>(t.finished);
  t.wilson = stats::wilson_interval(t.reached, t.finished, confidence);
  t.clopper_pearson = stats::clopper_pearson_interval(t.reached, t.finished, confidence);
  t.median_reached = t.finished > 0 && 2 * (t.finished - t.reached) < t.finished;
  if (t.median_reached) {
    t.median_steps = median_to_target(cell.target_runs, &TargetOutcome::step);
    t.median_flops = median_to_target(cell.target_runs, &TargetOutcome::flops);
    t.median_seconds = median_to_target(cell.target_runs, &TargetOutcome::seconds);
  }
  return t;
}

const std::optional<double>& median_cost(const TargetSummary& t, const std::string& cost) {
  if (cost == "steps") return t.median_steps;
  if (cost == "seconds") return t.median_seconds;
  return t.median_flops;
}

nlohmann::json targets_json(const Analysis& a) {
  using json = nlohmann::json;
  using json_values::opt;
  json out = json::array();
  for (const auto& t : a.targets) {
    const Cell& c = a.cells[t.cell].cell;
    json runs = json::array();
    for (const auto& r : c.target_runs)
      runs.push_back({{"seed", r.seed}, {"run", c.run_keys.at(r.run)}, {"status", r.status}, {"step", opt(r.step)},
                      {"flops", opt(r.flops)}, {"seconds", opt(r.seconds)}});
    out.push_back({{"cell", t.cell},           {"task", c.task},
                   {"entrant", c.entrant},     {"setting", c.setting()},
                   {"target", c.target},       {"runs", t.runs},
                   {"finished", t.finished},   {"reached", t.reached},
                   {"failed", t.failed},       {"stopped", t.stopped},
                   {"share", opt(t.share)},    {"share_wilson95", opt(t.wilson)},
                   {"share_clopper_pearson95", opt(t.clopper_pearson)},
                   {"median_reached", t.median_reached},
                   {"median_steps", opt(t.median_steps)},
                   {"median_flops", opt(t.median_flops)},
                   {"median_seconds", opt(t.median_seconds)},
                   {"values", std::move(runs)}});
  }
  return out;
}

}  // namespace lrb
