#include "suite/report/cells.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "suite/config/expand.h"
#include "suite/config/run_streams.h"
#include "suite/contracts/figure_key.h"
#include "suite/contracts/figures.h"
#include "suite/core/parallel_for.h"
#include "suite/report/efficiency.h"
#include "suite/store/run_view.h"

namespace lrb {

bool higher_is_better(const std::string& metric) { return figure_direction(metric) != Direction::Lower; }

std::string metric_of(const std::vector<RunRecord>& runs, const std::string& task, const std::string& requested) {
  if (!requested.empty()) {
    // "accuracy" means the evaluation metric; a stored name ("train_loss", "peak_bytes") is taken as is.
    for (const auto& r : runs)
      if (r.metrics.count(requested)) return requested;
    return FigureKey::task_metric(requested).stored();
  }
  for (const auto& r : runs)
    if (r.view().task == task) return r.primary_metric();
  return "eval_accuracy";
}

std::string display_metric(const std::string& m) { return FigureKey::parse(m).display(); }

std::string label_of(const nlohmann::json& settings) {
  std::string label;
  for (const auto& [k, v] : settings.items())
    label += (label.empty() ? "" : " ") + k + "=" + setting_text(v);
  return label;
}

nlohmann::json Cell::setting() const {
  nlohmann::json s = condition;
  for (const auto& [k, v] : model_options.items()) s[k] = v;
  return s;
}

std::string Cell::setting_shown() const { return setting_label().empty() ? "-" : setting_label(); }

std::string Cell::setting_label() const {
  const std::string m = label_of(model_options);
  if (condition_label.empty()) return m;
  return m.empty() ? condition_label : condition_label + " " + m;
}

namespace {

const std::string& task_of(const RunRecord& r) { return r.view().task; }
const std::string& model_of(const RunRecord& r) { return r.view().model; }

std::vector<std::string> with_prefix(const std::vector<std::string>& paths, std::initializer_list<const char*> prefixes) {
  std::vector<std::string> out;
  for (const auto& p : paths)
    for (const char* pre : prefixes)
      if (p.rfind(pre, 0) == 0) {
        out.push_back(p);
        break;
      }
  return out;
}

// The short names of paths: the part after the first dot, unless two paths share it.
std::map<std::string, std::string> short_names(const std::set<std::string>& paths) {
  std::map<std::string, int> uses;
  auto tail = [](const std::string& p) {
    const auto dot = p.find('.');
    return dot == std::string::npos ? p : p.substr(dot + 1);
  };
  for (const auto& p : paths) ++uses[tail(p)];
  std::map<std::string, std::string> out;
  for (const auto& p : paths) out[p] = uses[tail(p)] > 1 ? p : tail(p);
  return out;
}

std::string revision_of(const RunRecord& r) {
  if (!r.provenance.contains("git_revision") || !r.provenance.at("git_revision").is_string()) return "";
  return r.provenance.at("git_revision").get<std::string>() +
         (r.provenance.value("git_dirty", false) ? "+dirty" : "");
}

// The device a run used: the spec's type, with the provenance's device name where recorded
// (two GPU models are two devices for timing figures), and on a CPU the processor (two
// processors differ by 2x and more in a step's time).
std::string device_of(const RunRecord& r) {
  std::string d = r.view().device;
  if (const std::string gpu = r.gpu_name(); !gpu.empty()) return d + " (" + gpu + ")";
  if (r.provenance.contains("device_name") && r.provenance.at("device_name").is_string())
    return d + " (" + r.provenance.at("device_name").get<std::string>() + ")";
  if (const std::string cpu = r.cpu_name(); d == "cpu" && !cpu.empty()) return d + " (" + cpu + ")";
  return d;
}

// Whether revision_of and device_of would give a and b the same labels.
bool same_revision_and_device(const RunRecord& a, const RunRecord& b) {
  const auto same = [](const nlohmann::json& x, const nlohmann::json& y, const char* key) {
    const auto i = x.find(key), j = y.find(key);
    return (i == x.end()) == (j == y.end()) && (i == x.end() || *i == *j);
  };
  for (const char* key : {"git_revision", "git_dirty", "device_name"})
    if (!same(a.provenance, b.provenance, key)) return false;
  return a.gpu_name() == b.gpu_name() && a.cpu_name() == b.cpu_name() && same(a.spec, b.spec, "device");
}

}  // namespace

namespace {

// The distinct settings (task, model, train) among the runs: varying_paths depends only on
// which settings occur, so each is passed once and the many seeds of one setting (100,000
// runs of a few dozen) are not looked at again. setting_of[i] is run i's setting.
struct DistinctSettings {
  std::vector<std::size_t> setting_of;
  std::vector<const RunRecord*> first_runs;  // the first run of each
};

DistinctSettings distinct_settings(const std::vector<RunRecord>& runs) {
  DistinctSettings d;
  d.setting_of.resize(runs.size());
  // Writing the keys is a walk through every run's spec: on every core.
  std::vector<std::string> keys(runs.size());
  parallel_for(runs.size(), [&](std::size_t i) {
    const nlohmann::json& s = runs[i].spec;
    keys[i] = s.at("task").dump() + '\n' + s.at("model").dump() + '\n' + s.at("train").dump();
  });
  std::unordered_map<std::string_view, std::size_t> setting_index;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto [it, fresh] = setting_index.emplace(keys[i], d.first_runs.size());
    if (fresh) d.first_runs.push_back(&runs[i]);
    d.setting_of[i] = it->second;
  }
  return d;
}

// Which spec paths tell cells apart: per model, the model options that vary between its
// runs of one task (within a task, so that options a model derives from the task — input
// channels, classes — do not split one entrant into one per task); per task, the task and
// train settings that vary, the base seed and the group size where they do; and each
// path's short name.
struct CellPaths {
  std::map<std::string, std::vector<std::string>> model_paths, condition_paths;
  std::map<std::string, std::string> names;
};

// A model option chosen by a size match (spec model.match.<option>): "params≈1e+06", the
// same on every task where the width it gave differs; "" for an option set by hand.
std::string match_label(const RunRecord& r, const std::string& option) {
  const nlohmann::json& match = r.view().match;
  if (!match.is_object()) return "";
  const auto o = match.find(option);
  if (o == match.end() || !o->is_object()) return "";
  return matched_size_label(*o);
}

// The matched options of one model's runs on one task whose matches differ (two targets):
// they tell cells apart even where two targets happened to give one width.
void add_differing_matches(const std::vector<const RunRecord*>& runs, std::vector<std::string>& paths) {
  std::map<std::string, std::set<std::string>> labels;
  for (const RunRecord* r : runs)
    for (const auto& [option, how] : r->view().match.items()) labels[option].insert(match_label(*r, option));
  for (const auto& [option, seen] : labels)
    if (seen.size() > 1 && std::find(paths.begin(), paths.end(), "model." + option) == paths.end()) paths.push_back("model." + option);
}

CellPaths cell_paths(const std::vector<RunRecord>& runs, const std::vector<const RunRecord*>& first_runs) {
  std::map<std::string, std::vector<const nlohmann::json*>> specs_by_task;
  std::map<std::pair<std::string, std::string>, std::vector<const nlohmann::json*>> specs_by_task_model;
  std::map<std::pair<std::string, std::string>, std::vector<const RunRecord*>> runs_by_task_model;
  std::map<std::string, std::set<std::uint64_t>> base_seeds_by_task;
  std::map<std::string, std::set<int>> ranks_by_task;  // ranks_per_run (absent: 1)
  std::map<std::string, std::set<std::string>> streams_by_task;  // the streams runs name ([sweep] vary, fixed)
  std::map<std::string, std::set<int>> sharing_by_task;  // ranks on the run's GPU ([sweep] runs_per_gpu; 1: its own)
  for (const RunRecord* r : first_runs) {
    specs_by_task[task_of(*r)].push_back(&r->spec);
    specs_by_task_model[{task_of(*r), model_of(*r)}].push_back(&r->spec);
    runs_by_task_model[{task_of(*r), model_of(*r)}].push_back(r);
  }
  for (const auto& r : runs) {
    base_seeds_by_task[task_of(r)].insert(r.view().base_seed.value_or(0));
    ranks_by_task[task_of(r)].insert(r.view().ranks_per_run);
    streams_by_task[task_of(r)].insert(r.view().named_streams);
    sharing_by_task[task_of(r)].insert(r.gpu_shared_by());
  }
  CellPaths out;
  std::set<std::string> all_paths;
  for (const auto& [task_model, specs] : specs_by_task_model) {
    auto& paths = out.model_paths[task_model.second];
    for (const auto& p : with_prefix(varying_paths(specs), {"model."}))
      if (std::find(paths.begin(), paths.end(), p) == paths.end()) paths.push_back(p);
    add_differing_matches(runs_by_task_model[task_model], paths);
    all_paths.insert(paths.begin(), paths.end());
  }
  for (const auto& [task, specs] : specs_by_task) {
    auto& paths = out.condition_paths[task];
    paths = with_prefix(varying_paths(specs), {"task.", "train."});
    // Seed index s of two base seeds is two different experiments: keep them apart.
    if (base_seeds_by_task[task].size() > 1) paths.push_back("base_seed");
    // So is a run trained by one rank and by a data-parallel group (its gradient is summed
    // differently): both are part of the run's identity, and so of its cell.
    if (ranks_by_task[task].size() > 1) paths.push_back("ranks_per_run");
    // Runs that vary or hold streams on their own are another design than plain seeds: their
    // spread is of other sources, so they are cells of their own.
    if (streams_by_task[task].size() > 1) paths.push_back("streams");
    // Runs that shared their GPU with other ranks' runs took other times than runs that had
    // it alone: cells of their own, so that no comparison of times mixes them.
    if (sharing_by_task[task].size() > 1) paths.push_back("gpu_shared_by");
    all_paths.insert(paths.begin(), paths.end());
  }
  out.names = short_names(all_paths);
  return out;
}

nlohmann::json value_of(const RunRecord& r, const std::string& path) {
  if (path == "streams") return nlohmann::json(r.view().named_streams);
  if (path == "ranks_per_run") return nlohmann::json(r.view().ranks_per_run);
  if (path == "gpu_shared_by") return nlohmann::json(r.gpu_shared_by());
  if (path == "base_seed") return r.view().base_seed ? nlohmann::json(*r.view().base_seed) : nlohmann::json();
  return value_at_path(r.spec, path);  // a setting (config/setting_values.h)
}

// The cells found so far, each named by its task, model, entrant options and condition.
class CellIndex {
 public:
  CellIndex(const CellPaths& paths, std::map<std::string, std::string> metric_by_task)
      : paths_(paths), metric_by_task_(std::move(metric_by_task)) {}

  // The position of run r's cell, added when new.
  std::size_t of(const RunRecord& r) {
    Cell probe;
    probe.task = task_of(r);
    probe.model = model_of(r);
    probe.metric = metric_by_task_[probe.task];
    std::set<std::string> matched;  // options named by their match, not their value
    for (const auto& path : paths_.model_paths.at(probe.model)) {
      const std::string& name = paths_.names.at(path);
      if (std::string label = match_label(r, path.substr(6)); !label.empty()) {
        probe.model_options[name] = std::move(label);
        matched.insert(name);
        continue;
      }
      const auto v = value_of(r, path);
      if (!v.is_null()) probe.model_options[name] = v;
    }
    for (const auto& path : paths_.condition_paths.at(probe.task)) {
      const auto v = value_of(r, path);
      if (v.is_null()) continue;
      probe.condition[paths_.names.at(path)] = v;
      if (path != "task.seq_len") probe.condition_without_seq_len[paths_.names.at(path)] = v;
    }
    const std::string id = probe.task + "\n" + probe.model + "\n" + probe.model_options.dump() + "\n" + probe.condition.dump();
    auto [it, fresh] = index_.emplace(id, cells_.size());
    if (fresh) {
      probe.entrant = probe.model;
      for (const auto& [k, v] : probe.model_options.items())
        probe.entrant += " " + (matched.count(k) ? v.get<std::string>() : k + "=" + setting_text(v));
      probe.condition_label = label_of(probe.condition);
      probe.seq_len = r.view().seq_len;
      cells_.push_back(std::move(probe));
    }
    return it->second;
  }
  std::size_t size() const { return cells_.size(); }
  std::vector<Cell> take() { return std::move(cells_); }

 private:
  const CellPaths& paths_;
  std::map<std::string, std::string> metric_by_task_;
  std::map<std::string, std::size_t> index_;  // cell id -> position in cells_
  std::vector<Cell> cells_;
};

// A run's outcome against its target; failed runs never reached it (AlgoPerf's rule: a
// trial that fails has no time to the target), stopped runs have not finished.
TargetOutcome target_outcome(const RunRecord& r, std::int64_t seed, std::uint32_t run) {
  TargetOutcome t{seed, run, "not reached", std::nullopt, std::nullopt, std::nullopt};
  if (r.status != RunStatus::Ok) {
    t.status = r.status == RunStatus::Failed ? "failed" : "stopped";
    return t;
  }
  const auto finite = [&r](const char* name) -> std::optional<double> {
    const auto it = r.metrics.find(name);
    if (it == r.metrics.end() || !std::isfinite(it->second)) return std::nullopt;
    return it->second;
  };
  const auto reached = finite("target_reached");
  t.step = finite("target_step");
  if (!reached || *reached != 1.0 || !t.step) {
    t.step.reset();
    return t;
  }
  t.status = "reached";
  t.flops = finite("target_flops");
  t.seconds = finite("target_seconds");
  return t;
}

// The size matches of a cell's run: each matched option with the value it chose.
nlohmann::json matched_options(const RunRecord& r) {
  nlohmann::json out = nlohmann::json::object();
  if (r.view().match.is_null()) return out;
  for (const auto& [option, how] : r.view().match.items()) {
    out[option] = how;
    if (const nlohmann::json* v = spec_value_at(r.spec, "model.options." + option)) out[option]["value"] = *v;
  }
  return out;
}

// Where runs trained to a wall-time budget: their machines matter to their lengths.
void note_time_budget(Cell& cell, const RunRecord& r) {
  if (!r.view().time_budget) return;
  cell.budget_devices.insert(device_of(r));
  if (r.provenance.contains("threads") && r.provenance.at("threads").is_number_integer())
    cell.budget_threads.insert(r.provenance.at("threads").get<int>());
}

// One cell's values, efficiency figures, chance levels, problems and labels, from its own
// runs in their order.
void fill_cell(Cell& cell, const std::vector<const RunRecord*>& runs) {
  std::unordered_map<std::int64_t, const std::string*> run_of_seed;  // the run of each seed
  // A value per run at most: reserved, not grown (a million of them at 100,000 runs).
  const std::size_t most = runs.size();
  cell.run_keys.reserve(most);
  cell.values.reserve(most);
  cell.chance.reserve(most);
  for (const auto& em : efficiency_metrics()) cell.efficiency[em.name].reserve(most);
  const RunRecord* labelled = nullptr;  // the last run whose revision and device were taken
  for (const RunRecord* run : runs) {
    const RunRecord& r = *run;
    const std::int64_t seed = r.view().replicate;  // the seed, or the tuple of stream indices
    if (r.provenance.contains("threads") && r.provenance.at("threads").is_number_integer())
      cell.threads.insert(r.provenance.at("threads").get<int>());
    if (const auto m = r.provenance.find("model"); m != r.provenance.end() && m->is_object())
      if (const auto s = m->find("same_init"); s != m->end() && *s == true) cell.same_init = true;
    if (const auto p = r.provenance.find("matmul_peak"); p != r.provenance.end() && p->is_object())
      if (const auto s = p->find("suspect"); s != p->end() && s->is_string()) cell.suspect_peaks.insert(s->get<std::string>());
    // Runs of a cell nearly always share both: labels are built only where one differs.
    if (labelled == nullptr || !same_revision_and_device(*labelled, r)) {
      if (const std::string rev = revision_of(r); !rev.empty()) cell.revisions.insert(rev);
      cell.devices.insert(device_of(r));
      labelled = &r;
    }

    // This run's index in run_keys, added there when it gives its first value.
    std::optional<std::uint32_t> key_index;
    const auto run_key = [&] {
      if (!key_index) {
        key_index = static_cast<std::uint32_t>(cell.run_keys.size());
        cell.run_keys.push_back(r.key);
      }
      return *key_index;
    };
    if (auto ch = r.metrics.find("eval_chance"); ch != r.metrics.end() && std::isfinite(ch->second))
      cell.chance.push_back({seed, ch->second, run_key()});
    // One run per seed and cell: two would be the same seed twice (another device, say).
    // Every run past this check becomes a value or a problem of the cell.
    if (const auto [first, fresh] = run_of_seed.emplace(seed, &r.key); !fresh) {
      cell.duplicates.push_back(replicate_label(seed) + " has two runs (" + first->second->substr(0, 12) + ", " +
                                r.key.substr(0, 12) + "); the first is used");
      continue;
    }
    note_time_budget(cell, r);
    if (cell.matched.empty()) cell.matched = matched_options(r);
    if (r.view().flops_budget) cell.flops_budget = r.view().flops_budget;
    if (!r.view().target.is_null()) {
      if (cell.target.is_null()) cell.target = r.view().target;
      cell.target_runs.push_back(target_outcome(r, seed, run_key()));
    }
    if (r.status != RunStatus::Ok) {
      const bool failed = r.status == RunStatus::Failed;
      ++(failed ? cell.failed : cell.stopped);
      cell.problems.push_back({seed, r.key, failed ? "failed" : "stopped", r.error});
      continue;
    }
    for (const auto& em : efficiency_metrics()) {
      auto ev = r.metrics.find(em.name);
      if (ev != r.metrics.end() && std::isfinite(ev->second)) cell.efficiency[em.name].push_back({seed, ev->second, run_key()});
      else if (ev != r.metrics.end() && std::isnan(ev->second)) cell.not_counted.insert(em.name);
    }
    auto mv = r.metrics.find(cell.metric);
    if (mv == r.metrics.end() || !std::isfinite(mv->second)) {
      ++cell.no_value;
      cell.problems.push_back({seed, r.key, "no value",
                               mv == r.metrics.end() ? "no " + cell.metric + " recorded" : cell.metric + " is not finite"});
      continue;
    }
    cell.values.push_back({seed, mv->second, run_key()});
  }
}

// Each cell's lists by seed, only the figures its runs recorded; the cells by task,
// condition and entrant.
void sort_cells(std::vector<Cell>& cells) {
  const auto by_seed = [](const auto& a, const auto& b) { return a.seed < b.seed; };
  for (auto& c : cells) {
    for (auto it = c.efficiency.begin(); it != c.efficiency.end();)
      it = it->second.empty() ? c.efficiency.erase(it) : std::next(it);
    std::sort(c.values.begin(), c.values.end(), by_seed);
    std::sort(c.problems.begin(), c.problems.end(), by_seed);
    std::sort(c.target_runs.begin(), c.target_runs.end(), by_seed);
    for (auto& [name, v] : c.efficiency) std::sort(v.begin(), v.end(), by_seed);
  }
  std::stable_sort(cells.begin(), cells.end(), [](const Cell& a, const Cell& b) {
    if (a.task != b.task) return a.task < b.task;
    if (a.condition != b.condition) return a.condition < b.condition;
    return a.entrant < b.entrant;
  });
}

}  // namespace

std::vector<Cell> group_cells(const std::vector<RunRecord>& runs, const std::string& metric) {
  const DistinctSettings settings = distinct_settings(runs);
  const CellPaths paths = cell_paths(runs, settings.first_runs);
  std::map<std::string, std::string> metric_by_task;
  for (const auto& [task, condition] : paths.condition_paths) metric_by_task[task] = metric_of(runs, task, metric);
  CellIndex index(paths, std::move(metric_by_task));
  // The cell of a setting, base seed, group size, streams named and GPU sharing, once found:
  // their runs differ only in the seed (and the streams' indices).
  std::unordered_map<std::string, std::size_t> cell_of_setting;
  std::vector<std::vector<const RunRecord*>> runs_of_cell;  // in the runs' order
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const RunRecord& r = runs[i];
    const RunView& v = r.view();
    const std::string setting = std::to_string(settings.setting_of[i]) +
                                (v.base_seed ? " " + std::to_string(*v.base_seed) : std::string()) + " " +
                                std::to_string(v.ranks_per_run) + " " + v.named_streams + " " + std::to_string(r.gpu_shared_by());
    auto known = cell_of_setting.find(setting);
    if (known == cell_of_setting.end()) known = cell_of_setting.emplace(setting, index.of(r)).first;
    runs_of_cell.resize(index.size());
    runs_of_cell[known->second].push_back(&r);
  }
  std::vector<Cell> cells = index.take();
  // Each cell from its own runs, in their order, the cells on every core.
  parallel_for(cells.size(), [&](std::size_t c) { fill_cell(cells[c], runs_of_cell[c]); });
  sort_cells(cells);
  return cells;
}

}  // namespace lrb
