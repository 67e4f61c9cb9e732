#pragma once
// The record model: everything one run produces. The runner fills it; the HDF5 run file,
// the merged sweep file, the reports and every other sink read it. Sinks never see the
// runner and the runner never sees a sink.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lrb {

inline constexpr int kResultsSchemaVersion = 1;

enum class RunStatus { Ok, Failed, Stopped };
const char* status_name(RunStatus s);
RunStatus status_from_name(const std::string& s);  // throws std::invalid_argument

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

  std::string primary_metric() const;  // spec's task metrics[0], prefixed "eval_"
};

}  // namespace lrb
