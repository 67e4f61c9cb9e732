#pragma once
// The record model: everything one run produces. The runner fills it; the HDF5 run file,
// the merged sweep file, the reports and every other sink read it. Sinks never see the
// runner and the runner never sees a sink.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lrb {

struct RunView;

// 2: /figures (each metric's unit and better side). Files of version 1 still read.
inline constexpr int kResultsSchemaVersion = 2;

enum class RunStatus { Ok, Failed, Stopped };
const char* status_name(RunStatus s);
RunStatus status_from_name(const std::string& s);  // throws std::invalid_argument

// A figure's unit and better side as a run file records them ("bytes", "lower"...: the
// names of suite/contracts/figures.h).
struct RecordedFigure {
  std::string unit;
  std::string direction;
  bool operator==(const RecordedFigure& o) const { return unit == o.unit && direction == o.direction; }
};

struct RunRecord {
  std::string key;              // the run key: sha256 of spec.dump()
  nlohmann::json spec;          // the resolved, canonical RunSpec
  nlohmann::json provenance;    // how it ran: host, rank, threads, versions, git, Slurm, attempt, times
  RunStatus status = RunStatus::Ok;
  std::string error;            // the reason, when not ok
  // Final scalars: task metrics ("eval_accuracy", "eval_macro_f1", "eval_loss",
  // "train_loss"), cost ("params", "flops_per_sample"), speed ("samples_per_s",
  // "tokens_per_s", "step_seconds_median", "step_seconds_p95"), memory ("peak_bytes",
  // "peak_step_bytes", "memory_budget_bytes"), and "steps_done".
  std::map<std::string, double> metrics;
  // Per-step and per-evaluation series: "train_step", "train_loss", "lr", "step_seconds",
  // "eval_step", "eval_<metric>"... Series of one family have equal lengths.
  std::map<std::string, std::vector<double>> curves;
  // What the model or task chose and a report may show (MAELRE's per-block attention,
  // BigBird's random block table...): free-form JSON.
  nlohmann::json records = nlohmann::json::object();
  // Each metric's unit and direction as read from its run file (empty from a version-1 file;
  // a written file takes them from the figure catalogue). Reports read the catalogue; a
  // figure it does not know is declared from here when the record is read.
  std::map<std::string, RecordedFigure> figures;

  std::string primary_metric() const;  // spec's task metrics[0], prefixed "eval_"
  std::string gpu_name() const;        // the GPU it trained on (provenance gpu.name); empty on a CPU
  // The runs_per_gpu its job shared GPUs at ([sweep] runs_per_gpu; provenance gpu.shared_by):
  // 1 when its rank had a GPU to itself, or it ran on a CPU.
  int gpu_shared_by() const;
  // The processor it ran on (provenance cpu: "AMD EPYC, family 25 model 17"); empty where not
  // recorded. The family and model tell core designs apart that share a name.
  std::string cpu_name() const;
  // The spec read once into typed fields (run_view.h), on first use; safe to call from several
  // threads. Set the spec before: a record keeps its first reading.
  const RunView& view() const;

  mutable std::shared_ptr<const RunView> view_cache;  // view()'s; copies share it
};

}  // namespace lrb
