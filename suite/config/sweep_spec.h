#pragma once
// The sweep file as the user wrote it, validated: every key known, every value typed and in
// range, every model and task registered. Nothing runs before this succeeds.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "suite/config/claim_spec.h"
#include "suite/config/sequential_design.h"
#include "suite/config/train_settings.h"
#include "suite/contracts/options.h"
#include "suite/config/variant_spec.h"

namespace lrb {

// A sweep file is read only up to this size (sweep files are a few KiB).
inline constexpr std::uintmax_t kMaxSweepFileBytes = std::uintmax_t{1} << 20;
// Runs a sweep may expand to, counted before any run is built: [sweep] max_runs, by default
// kDefaultMaxRuns, at most kMaxRunsLimit: every rank of `run` and `validate` holds every
// run's description, about 5.4 KiB each (measured: 200,000 runs, 1.2 GiB at peak), so a
// million runs would need some 5.5 GiB per rank.
inline constexpr std::int64_t kDefaultMaxRuns = 10000;
inline constexpr std::int64_t kMaxRunsLimit = 200000;
// The largest data-parallel group a run may span.
inline constexpr int kMaxRanksPerRun = 4096;
inline constexpr int kMaxRunsPerGpu = 64;  // ranks sharing one GPU: far past what fits

struct SweepSettings {
  std::string name;
  std::vector<std::int64_t> seeds;  // seed indices (a sequential design: 0 .. max − 1, drawn in waves)
  // seeds = { first, step, max }: a sequential study (sequential_design.h); budget: its wall time.
  std::optional<SequentialSeeds> sequential;
  SourceLocation sequential_at;
  std::optional<double> budget_seconds;
  SourceLocation budget_at;
  // Random streams on their own (run_streams.h): `vary` crosses this many indices of each
  // named stream within every seed (a factorial, in kStreams' order); `fixed` holds the
  // named streams at index 0 in every run. The other streams follow the seed index.
  std::vector<std::pair<std::string, std::int64_t>> vary;
  std::vector<std::string> fixed;
  SourceLocation vary_at, fixed_at;
  std::uint64_t base_seed = 0;
  // The longest one model call may take, in seconds (suite/core/call_watch.h); 0: no limit.
  // A harness setting: not part of any run's identity.
  double step_time_limit = 0;
  std::string device = "cpu";
  SourceLocation device_at;  // where the file names it (not known: the default)
  int threads = 0;               // 0 = auto: cores on the node / ranks on the node
  std::int64_t checkpoint_every = 0;  // steps between periodic checkpoints; 0 = only when stopped
  std::int64_t max_runs = kDefaultMaxRuns;  // refuse a larger expansion
  // Data parallelism: each run trains on this many consecutive MPI ranks (its group),
  // each on a slice of the global batch. Must divide the job's rank count (checked when
  // the job starts: sweep_runner.cpp). Where the user wrote it, for that message.
  int ranks_per_run = 1;
  SourceLocation ranks_per_run_at;
  // Ranks (each with its own runs) that may share one GPU (device = "cuda"): many small runs
  // fill a GPU that one leaves idle; their time figures are marked shared (gpu.shared_by).
  int runs_per_gpu = 1;
  SourceLocation runs_per_gpu_at;
  // How a group sums its gradients: "auto", "mpi" or "nccl" (resolved for this build when
  // the job starts: suite/sweep/gradient_exchange_choice.h). Recorded in provenance.
  std::string exchange = "auto";
  SourceLocation exchange_at;
};

// An integer model option chosen so that the model's own count of `figure` lies nearest
// `to`: dim = { match = "params", to = 1e6 } (expand.cpp, size_match.h).
struct SizeMatch {
  std::string option;  // "dim"
  std::string figure;  // "params" or "flops" (forward FLOPs per sample)
  double to = 0;       // the target on every task, or:
  std::map<std::string, double> to_by_task;  // to = { fashion-mnist = 4e5, listops = 1e5 }
  SourceLocation where;  // the option's key
  SourceLocation to_where;

  // The target on `task`; nothing where a per-task table leaves the task out.
  std::optional<double> target_on(const std::string& task) const;
};

struct Block {  // one [[task]] or [[model]] table
  std::string name;
  SourceLocation where;
  std::vector<OptionAxis> axes;  // for tasks, seq_len first
  std::vector<SizeMatch> matches;  // models only
};

// [train] target = { metric = "accuracy", value = 0.7 }: checked against each task's
// metrics when the sweep is expanded.
struct TargetSpec {
  std::string metric;   // stored name: "eval_accuracy", "eval_loss"
  std::string written;  // as the file names it: "accuracy"
  double value = 0;
  SourceLocation where, metric_where;
};

struct SweepSpec {
  std::string file;  // as given, for messages
  SweepSettings sweep;
  std::vector<OptionAxis> train;
  std::optional<TargetSpec> target;  // [train] target
  std::vector<Block> tasks;
  std::vector<Block> models;
  // [measure]: when present, every run is a measurement (peak memory and step time at the
  // [train] batch size, and the largest batch within a budget) instead of a training run.
  std::optional<MeasureSettings> measure;
  // [[claim]]: what the study claims; the report gives each a verdict (claim_spec.h).
  std::vector<ClaimSpec> claims;
  // [[variant]] and [evaluate]: after training, the same weights evaluated again under each
  // variant's inference settings (variant_spec.h). evaluate is null without variants.
  std::vector<VariantSpec> variants;
  json evaluate;
};

const OptionSchema& sweep_schema();

SweepSpec load_sweep_file(const std::filesystem::path& path);
SweepSpec parse_sweep(std::string_view text, const std::string& file_label);

}  // namespace lrb
