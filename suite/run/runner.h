#pragma once
// The Runner: one run from its RunSpec to its published run file. Deterministic on CPU
// (same RunSpec and thread count -> same bits). Stops at a step boundary when a stop was
// requested, leaving a checkpoint; resumes from it when one exists.
#include <filesystem>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "suite/config/run_spec.h"
#include "suite/store/run_record.h"

namespace lrb {

class RunGroup;

struct RunContext {
  std::filesystem::path results_dir;  // writes runs/<key>.h5, checkpoints/<key>.pt
  int threads = 1;                    // intra-op threads, set before anything runs
  int device_index = 0;               // CUDA device for device = "cuda"
  std::int64_t checkpoint_every = 0;  // periodic checkpoints (steps); 0 = only when stopped
  nlohmann::json provenance = nlohmann::json::object();  // job-level facts (sweep, rank, host...)
  bool publish = true;                // false: return the record without writing (tests, measure)
  std::filesystem::path data_cache;   // task data cache folder (suite/run/data_cache.h); empty: memory only
  // The ranks that train this run together (data parallelism); null or of size 1: this
  // rank alone. Every member calls execute_run for the same run; member 0 writes its files.
  RunGroup* group = nullptr;
  // What one rank's device reaches on a float32 matrix product (suite/run/matmul_peak.h);
  // 0: unknown, and runs record no utilisation.
  double peak_flops_per_s = 0;
};

struct RunOutcome {
  RunStatus status = RunStatus::Ok;
  std::string error;
  RunRecord record;
};

RunOutcome execute_run(const RunSpec& run, const RunContext& ctx);


// The learning rate for the step about to run (0-based), from [train]; under a time budget
// from the seconds the run's steps have taken so far.
double learning_rate_at(const TrainSettings& train, std::int64_t step, double elapsed_seconds = 0);

}  // namespace lrb
