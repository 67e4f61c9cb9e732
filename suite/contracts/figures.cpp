#include "suite/contracts/figures.h"

#include <deque>
#include <unordered_set>
#include <mutex>
#include <stdexcept>

#include "suite/contracts/figure_key.h"

namespace lrb {

namespace {

using D = Direction;
using U = FigureUnit;

const char* const kFromRunFile = "run file";

FigureDef figure(std::string name, U unit, D direction, bool exact, std::string by) {
  FigureDef f;
  f.name = std::move(name);
  f.unit = unit;
  f.direction = direction;
  f.exact_on_cpu = exact;
  f.recorded_by = std::move(by);
  return f;
}

FigureDef family(std::string prefix, std::string suffix, U unit, D direction, bool exact, std::string by) {
  FigureDef f = figure(std::move(prefix), unit, direction, exact, std::move(by));
  f.suffix = std::move(suffix);
  f.family = true;
  return f;
}

FigureDef task_metric(std::string name) {
  FigureDef f = figure(std::move(name), U::Plain, D::Higher, false, "task metric (suite/contracts/metrics.cpp)");
  f.task_metric = true;
  return f;
}

// What suite/run records of every run (runner.cpp) and of a measurement run (measure).
std::vector<FigureDef> runner_figures() {
  const std::string by = "runner";
  return {
      figure("train_loss", U::Plain, D::Lower, false, by),
      figure("eval_loss", U::Plain, D::Lower, false, by),
      figure("eval_chance", U::Plain, D::None, false, by),  // the commonest class's share: a reference, not a result
      figure("steps_done", U::Count, D::None, false, by),
      figure("params", U::Count, D::Lower, true, by),
      figure("flops_per_sample", U::Count, D::Lower, true, by),
      figure("step_seconds_median", U::Seconds, D::Lower, false, by),
      figure("step_seconds_p95", U::Seconds, D::Lower, false, by),
      // Where the step goes (suite/run/step_phases.h): each phase's median over the steps.
      figure("step_data_seconds_median", U::Seconds, D::Lower, false, by),
      figure("step_forward_seconds_median", U::Seconds, D::Lower, false, by),
      figure("step_backward_seconds_median", U::Seconds, D::Lower, false, by),
      figure("step_optimizer_seconds_median", U::Seconds, D::Lower, false, by),
      figure("step_other_seconds_median", U::Seconds, D::Lower, false, by),
      figure("samples_per_s", U::Rate, D::Higher, false, by),
      figure("tokens_per_s", U::Rate, D::Higher, false, by),
      // Model FLOP utilisation: 3 x forward FLOPs x batch per step over the step median, and
      // that over the measured float32 matrix-product peak (suite/run/matmul_peak.h).
      figure("model_flops_per_s", U::Rate, D::Higher, false, by),
      figure("flop_utilisation", U::Share, D::Higher, false, by),
      figure("wall_seconds", U::Seconds, D::Lower, false, by),
      // The cost of training: 3 x flops_per_sample x batch x steps done (NaN where the model's
      // FLOPs are not counted), and, in runs with a target, whether and at what cost their
      // evaluation first reached it (the three costs absent when it never did).
      figure("train_flops", U::Count, D::Lower, true, by),
      figure("target_reached", U::Share, D::Higher, false, by),
      figure("target_step", U::Count, D::Lower, false, by),
      figure("target_flops", U::Count, D::Lower, false, by),
      figure("target_seconds", U::Seconds, D::Lower, false, by),
      // The counting allocator's peaks: exact counts on a CPU.
      figure("peak_bytes", U::Bytes, D::Lower, true, by),
      figure("peak_step_bytes", U::Bytes, D::Lower, true, by),
      figure("device_peak_bytes", U::Bytes, D::Lower, false, by),  // CUDA's caching allocator
      figure("data_bytes", U::Bytes, D::None, false, by),
      figure("memory_budget_bytes", U::Bytes, D::None, false, by),
      figure("max_batch_in_budget", U::Count, D::Higher, true, by),
      // Data-parallel runs: the gradient exchange's median time and its share of a step.
      figure("allreduce_seconds_median", U::Seconds, D::Lower, false, by),
      figure("allreduce_share", U::Plain, D::Lower, false, by),
  };
}

// What suite/run/variant_eval.cpp records per evaluation variant (as "variant.<v>.<name>").
std::vector<FigureDef> variant_figures() {
  const std::string by = "variant evaluator";
  return {
      family("infer_peak_bytes_b", "", U::Bytes, D::Lower, true, by),
      family("infer_seconds_b", "", U::Seconds, D::Lower, false, by),
      family("infer_samples_per_s_b", "", U::Rate, D::Higher, false, by),
      family("probe_", "_cosine", U::Plain, D::Higher, false, by),
      family("probe_", "_mean_shift", U::Plain, D::Lower, false, by),
      family("probe_", "_var_ratio", U::Plain, D::None, false, by),  // 1 is ideal: neither side is better
  };
}

// The metrics of metrics.cpp's table, all shares of samples or decisions (higher is better).
std::vector<FigureDef> task_metric_figures() {
  std::vector<FigureDef> out;
  for (const char* m : {"accuracy", "macro_f1", "top3", "top5", "top10", "ebf", "micro_f1"}) out.push_back(task_metric(m));
  return out;
}

bool same_definition(const FigureDef& a, const FigureDef& b) {
  return a.name == b.name && a.unit == b.unit && a.direction == b.direction && a.exact_on_cpu == b.exact_on_cpu &&
         a.suffix == b.suffix && a.family == b.family && a.task_metric == b.task_metric;
}

struct Catalogue {
  std::mutex mutex;
  std::deque<FigureDef> figures;  // a deque: pointers handed out stay valid as figures are declared
  std::unordered_set<std::string> recorded_seen;  // names declare_recorded_figure has looked up
  Catalogue() {
    for (auto* list : {&runner_figures, &variant_figures, &task_metric_figures})
      for (FigureDef& f : (*list)()) {
        f.harness = true;
        add(std::move(f));
      }
  }
  void add(FigureDef f) {
    for (FigureDef& g : figures)
      if (g.name == f.name && g.suffix == f.suffix && g.task_metric == f.task_metric) {
        if (same_definition(g, f)) return;
        if (g.recorded_by == kFromRunFile) {  // the program's own definition wins over a file's
          g = std::move(f);
          return;
        }
        throw std::logic_error("figure '" + f.name + f.suffix + "' is declared twice, differently (by " + g.recorded_by +
                               " and by " + f.recorded_by + ")");
      }
    figures.push_back(std::move(f));
  }
};

Catalogue& catalogue() {
  static Catalogue c;
  return c;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

const FigureDef* find_plain(std::string_view name, bool as_task_metric) {
  for (const FigureDef& f : catalogue().figures) {
    if (f.task_metric != as_task_metric) continue;
    if (!f.family && f.name == name) return &f;
    if (f.family && name.size() > f.name.size() + f.suffix.size() && name.substr(0, f.name.size()) == f.name &&
        ends_with(name, f.suffix))
      return &f;
  }
  return nullptr;
}

}  // namespace

const char* direction_name(Direction d) {
  switch (d) {
    case Direction::Higher: return "higher";
    case Direction::Lower: return "lower";
    case Direction::None: break;
  }
  return "none";
}

const char* unit_name(FigureUnit u) {
  switch (u) {
    case FigureUnit::Count: return "count";
    case FigureUnit::Bytes: return "bytes";
    case FigureUnit::Seconds: return "seconds";
    case FigureUnit::Rate: return "1/s";
    case FigureUnit::Share: return "share";
    case FigureUnit::Plain: break;
  }
  return "";
}

FigureDef model_figure(std::string name, FigureUnit unit, Direction direction, bool exact_on_cpu, std::string model) {
  return figure(std::move(name), unit, direction, exact_on_cpu, "model " + model);
}

void declare_figure(FigureDef def) {
  Catalogue& c = catalogue();
  const std::lock_guard<std::mutex> lock(c.mutex);
  c.add(std::move(def));
}

namespace {

// find_figure with the catalogue's lock held.
const FigureDef* find_locked(std::string_view name) {
  // "variant.<v>.<rest>": the variant's own record of <rest>.
  const FigureKey key = FigureKey::parse(name);
  if (name.substr(0, 8) == "variant." && key.variant.empty()) return nullptr;  // "variant.<v>" with nothing after
  if (const FigureDef* f = find_plain(key.figure(), false)) return f;
  if (key.kind == FigureKey::Kind::TaskMetric) return find_plain(key.name, true);
  return nullptr;
}

}  // namespace

const FigureDef* find_figure(std::string_view name) {
  Catalogue& c = catalogue();
  const std::lock_guard<std::mutex> lock(c.mutex);
  return find_locked(name);
}

std::optional<Direction> direction_from_name(std::string_view name) {
  for (Direction d : {Direction::Higher, Direction::Lower, Direction::None})
    if (name == direction_name(d)) return d;
  return std::nullopt;
}

std::optional<FigureUnit> unit_from_name(std::string_view name) {
  for (FigureUnit u : {FigureUnit::Count, FigureUnit::Bytes, FigureUnit::Seconds, FigureUnit::Rate, FigureUnit::Share, FigureUnit::Plain})
    if (name == unit_name(u)) return u;
  return std::nullopt;
}

bool parse_figure_names(std::string_view unit, std::string_view direction, FigureUnit* unit_out, Direction* direction_out) {
  bool unit_found = false, direction_found = false;
  for (FigureUnit u : {FigureUnit::Count, FigureUnit::Bytes, FigureUnit::Seconds, FigureUnit::Rate, FigureUnit::Share, FigureUnit::Plain})
    if (unit == unit_name(u)) {
      *unit_out = u;
      unit_found = true;
    }
  for (Direction d : {Direction::Higher, Direction::Lower, Direction::None})
    if (direction == direction_name(d)) {
      *direction_out = d;
      direction_found = true;
    }
  return unit_found && direction_found;
}

void declare_recorded_figure(const std::string& stored_name, FigureUnit unit, Direction direction) {
  Catalogue& c = catalogue();
  const std::lock_guard<std::mutex> lock(c.mutex);
  if (!c.recorded_seen.insert(stored_name).second || find_locked(stored_name) != nullptr) return;
  // A variant's figure is the figure it records under "variant.<v>.": declared as that.
  FigureDef f = figure(FigureKey::parse(stored_name).figure(), unit, direction, false, kFromRunFile);
  c.figures.push_back(std::move(f));
}

bool is_harness_figure(std::string_view stored_name) {
  const FigureDef* f = find_figure(stored_name);
  return f != nullptr && f->harness;
}

Direction figure_direction(std::string_view name) {
  const FigureDef* f = find_figure(name);
  return f ? f->direction : Direction::None;
}

std::vector<FigureDef> all_figures() {
  Catalogue& c = catalogue();
  const std::lock_guard<std::mutex> lock(c.mutex);
  return {c.figures.begin(), c.figures.end()};
}

}  // namespace lrb
