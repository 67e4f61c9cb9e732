// A task's scaling table: log-log fits of memory and time against sequence length.
#include "suite/report/task_tables.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "suite/core/text.h"
#include "suite/report/report_tables.h"
#include "suite/report/table_cells.h"
#include "suite/report/text_format.h"

namespace lrb {

std::string scaling_reading(const stats::LineFit& f) {
  if (!f.slope_ci) return "–";
  const auto& ci = *f.slope_ci;
  // Near k: the interval reaches within the practical tolerance of slope k.
  auto near = [&](double k) { return ci.lo <= k + kSlopeTolerance && ci.hi >= k - kSlopeTolerance; };
  std::vector<std::string> readings;
  if (near(0)) readings.push_back("constant");
  if (near(1)) readings.push_back("linear");
  if (near(2)) readings.push_back("quadratic");
  if (readings.size() == 1) return readings.front();
  if (readings.size() > 1) return "undecided (" + join(readings, " or ") + ")";
  if (ci.hi < 1) return "sublinear";
  if (ci.lo > 2) return "superquadratic";
  return "between linear and quadratic";
}

namespace task_tables {

using namespace table_cells;

std::optional<Table> scaling_table(const Analysis& a, const TaskResult& t) {
  if (t.scaling.empty()) return std::nullopt;
  Table tab;
  tab.id = "scaling-" + slug(t.task);
  tab.title = t.task + " — scaling with N (sequence length), log-log least squares";
  tab.columns = {"model", "setting", "figure", "N", "lengths", "points", "slope", "95% CI", "R²", "reading"};
  for (std::size_t k : t.scaling) {
    const ScalingResult& s = a.scaling[k];
    double lo = s.points.front().first, hi = lo;
    for (const auto& p : s.points) {
      lo = std::min(lo, p.first);
      hi = std::max(hi, p.first);
    }
    std::vector<TableCell> row;
    row.push_back(text(s.entrant));
    row.push_back(text(s.condition_label.empty() ? "-" : s.condition_label));
    row.push_back(text(s.metric == "peak_bytes"            ? "peak memory"
                       : s.metric == "peak_step_bytes"     ? "step memory"
                       : s.metric == "attention_peak_bytes" ? "attention memory"
                       : s.metric == "step_seconds_median" ? "step time"
                                                           : s.metric));
    row.push_back(text(fmt::format("{:.0f}–{:.0f}", lo, hi)));
    row.push_back(count(s.lengths));
    row.push_back(count(s.points.size()));
    row.push_back(number(s.fit.slope, fmt::format("{:.3f}", s.fit.slope)));
    if (s.fit.slope_ci)
      row.push_back(number(s.fit.slope_ci->lo, fmt::format("[{:.3f}, {:.3f}]", s.fit.slope_ci->lo, s.fit.slope_ci->hi)));
    else
      row.push_back(text("–"));
    row.push_back(number(s.fit.r_squared, fmt::format("{:.3f}", s.fit.r_squared)));
    row.push_back(text(scaling_reading(s.fit)));
    tab.rows.push_back(std::move(row));
  }
  tab.notes.push_back(fmt::format(
      "slope of log(figure) against log(N) by least squares over every ok run (seeds are points), with its {:.0f} % interval "
      "(t, n − 2 df); reading: constant, linear or quadratic when the interval comes within ±{:.2g} of a slope of 0, 1 or 2 "
      "(a practical tolerance), sub- or superlinear only when it stays clear of all of them; "
      "figures: peak memory, step memory (a training step's own peak: activations, beyond the resident parameters, gradients and optimizer state) and median step time; fits need 3 or more distinct lengths",
      a.options.bootstrap.confidence * 100, kSlopeTolerance));
  return tab;
}

}  // namespace task_tables
}  // namespace lrb
