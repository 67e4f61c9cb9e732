#include "suite/report/cells.h"

#include <cmath>
#include <map>

#include "suite/config/expand.h"

namespace lrb {

bool lower_is_better(const std::string& metric) {
  for (const char* w : {"loss", "seconds", "bytes", "flops", "params"})
    if (metric.find(w) != std::string::npos) return true;
  return false;
}

std::string metric_of(const std::vector<RunRecord>& runs, const std::string& task, const std::string& requested) {
  if (!requested.empty()) {
    // "accuracy" means the evaluation metric; a stored name ("train_loss", "peak_bytes") is taken as is.
    for (const auto& r : runs)
      if (r.metrics.count(requested)) return requested;
    return "eval_" + requested;
  }
  for (const auto& r : runs)
    if (r.spec.at("task").at("name") == task) return r.primary_metric();
  return "eval_accuracy";
}

std::vector<Cell> group_cells(const std::vector<RunRecord>& runs, const std::string& metric) {
  std::map<std::string, std::vector<const RunRecord*>> by_task;
  for (const auto& r : runs) by_task[r.spec.at("task").at("name").get<std::string>()].push_back(&r);
  std::vector<Cell> cells;
  for (const auto& [task, task_runs] : by_task) {
    std::vector<nlohmann::json> specs;
    for (const auto* r : task_runs) specs.push_back(r->spec);
    const auto varying = varying_paths(specs);
    const std::string m = metric_of(runs, task, metric);
    std::map<std::string, std::size_t> index;  // cell id -> position in cells
    for (const auto* r : task_runs) {
      Cell probe;
      probe.task = task;
      probe.model = r->spec.at("model").at("name");
      std::string label;
      for (const auto& path : varying) {
        const auto v = value_at_path(r->spec, path);
        if (v.is_null()) continue;
        probe.setting[path] = v;
        const auto dot = path.find('.');
        label += (label.empty() ? "" : " ") + path.substr(dot + 1) + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
      }
      probe.setting_label = label;
      const std::string id = probe.model + "\n" + probe.setting.dump();
      auto [it, fresh] = index.emplace(id, cells.size());
      if (fresh) cells.push_back(probe);
      Cell& cell = cells[it->second];
      const auto seed = r->spec.at("seed_index").get<std::int64_t>();
      if (r->provenance.contains("threads")) cell.threads.insert(r->provenance.at("threads").get<int>());
      if (r->provenance.contains("git_revision"))
        cell.revisions.insert(r->provenance.at("git_revision").get<std::string>() +
                              (r->provenance.value("git_dirty", false) ? "+dirty" : ""));
      cell.devices.insert(r->spec.at("device").get<std::string>());
      if (r->status == RunStatus::Failed) {
        ++cell.failed;
        cell.problems.push_back("seed " + std::to_string(seed) + " failed: " + r->error);
        continue;
      }
      if (r->status == RunStatus::Stopped) {
        ++cell.stopped;
        cell.problems.push_back("seed " + std::to_string(seed) + " stopped: " + r->error);
        continue;
      }
      auto mv = r->metrics.find(m);
      if (mv == r->metrics.end() || !std::isfinite(mv->second)) {
        ++cell.failed;
        cell.problems.push_back("seed " + std::to_string(seed) + ": no finite value of " + m);
        continue;
      }
      cell.values.push_back({seed, mv->second, r->key});
    }
  }
  for (auto& c : cells)
    std::sort(c.values.begin(), c.values.end(), [](const SeedValue& a, const SeedValue& b) { return a.seed < b.seed; });
  return cells;
}

}  // namespace lrb
