#include "suite/report/summary_report.h"

#include <fmt/format.h>

#include <map>

#include "suite/report/cells.h"
#include "suite/stats/describe.h"

namespace lrb {

namespace {
std::string number(double v) {
  if (std::fabs(v) >= 1e4 || (v != 0 && std::fabs(v) < 1e-3)) return fmt::format("{:.4g}", v);
  return fmt::format("{:.4f}", v);
}
std::string short_metric(const std::string& m) { return m.rfind("eval_", 0) == 0 ? m.substr(5) : m; }
}  // namespace

Report build_summary_report(const ResultsScan& scan, const ReportOptions& options, const nlohmann::json& skipped) {
  Report report;
  const std::vector<Cell> cells = group_cells(scan.runs, options.metric);
  std::map<std::string, std::vector<const Cell*>> by_task;
  for (const auto& c : cells) by_task[c.task].push_back(&c);

  for (const auto& [task, task_cells] : by_task) {
    const std::string metric = metric_of(scan.runs, task, options.metric);
    const bool lower = lower_is_better(metric);
    Table t;
    t.title = fmt::format("{} — {} ({} is better), over seeds", task, short_metric(metric), lower ? "lower" : "higher");
    t.columns = {"model", "setting", short_metric(metric) + " mean ± std", "95% CI (t)", "n", "failed", "stopped"};
    std::optional<double> best;
    std::vector<std::optional<double>> means;
    std::set<int> threads;
    std::set<std::string> revisions, devices;
    bool small_n = false;
    for (const Cell* c : task_cells) {
      std::vector<double> v;
      for (const auto& sv : c->values) v.push_back(sv.value);
      const stats::CellSummary s = stats::describe(v);
      std::vector<TableCell> row(7);
      row[0].text = c->model;
      row[1].text = c->setting_label.empty() ? "-" : c->setting_label;
      if (s.n == 0) {
        row[2].text = "no result";
        row[2].alert = true;
        row[3].text = "-";
      } else if (s.n == 1) {
        row[2] = {number(*s.mean), *s.mean};
        row[3].text = "n=1";
        small_n = true;
      } else {
        row[2] = {number(*s.mean) + " ± " + number(*s.std), *s.mean};
        row[3] = {"[" + number(s.t_ci->lo) + ", " + number(s.t_ci->hi) + "]", s.t_ci->lo};
        if (s.n < 3) small_n = true;
      }
      row[4] = {std::to_string(s.n), static_cast<double>(s.n)};
      row[5] = {std::to_string(c->failed), static_cast<double>(c->failed), false, false, c->failed > 0};
      row[6] = {std::to_string(c->stopped), static_cast<double>(c->stopped), false, false, c->stopped > 0};
      means.push_back(s.mean);
      if (s.mean && (!best || (lower ? *s.mean < *best : *s.mean > *best))) best = s.mean;
      t.rows.push_back(std::move(row));
      for (const auto& p : c->problems) t.notes.push_back(c->model + (c->setting_label.empty() ? "" : " " + c->setting_label) + ", " + p);
      threads.insert(c->threads.begin(), c->threads.end());
      revisions.insert(c->revisions.begin(), c->revisions.end());
      devices.insert(c->devices.begin(), c->devices.end());
    }
    for (std::size_t i = 0; i < t.rows.size(); ++i)
      if (means[i] && best && *means[i] == *best && t.rows.size() > 1) t.rows[i][2].best = true;
    t.notes.insert(t.notes.begin(), "* best mean; CI: Student-t 95 % interval of the mean over seeds; n: runs with a result");
    if (threads.size() > 1)
      report.warnings.push_back(fmt::format("{}: runs used different thread counts ({}); CPU results are bit-identical only at equal thread counts",
                                            task, fmt::join(threads, ", ")));
    if (revisions.size() > 1)
      report.warnings.push_back(fmt::format("{}: runs come from different code revisions ({})", task, fmt::join(revisions, ", ")));
    if (devices.size() > 1)
      report.warnings.push_back(fmt::format("{}: runs mix devices ({})", task, fmt::join(devices, ", ")));
    if (small_n) report.warnings.push_back(task + ": some cells have fewer than 3 results; their intervals are wide or absent");
    report.tables.push_back(std::move(t));
  }
  for (const auto& b : scan.bad)
    report.warnings.push_back("bad result file " + b.file.string() + ": " + b.reason + " (counted as missing)");
  for (const auto& s : skipped)
    report.warnings.push_back("skipped combination " + s.at("what").get<std::string>() + ": " + s.at("reason").get<std::string>());
  if (scan.runs.empty()) report.warnings.push_back("no valid run files");
  return report;
}

}  // namespace lrb
