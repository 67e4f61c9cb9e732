#pragma once
// The sbatch scripts of `lrbench slurm`, rendered from the templates in slurm/ (compiled
// into the binary). Every value is checked before it is written (slurm_values.h): nothing
// from the sweep file or the command line reaches the script unchecked.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "suite/slurm/slurm_values.h"

namespace lrb {

struct SbatchJob {
  std::string name;                    // the sweep's name (a Slurm name)
  std::filesystem::path lrbench;       // absolute path of the lrbench binary
  std::filesystem::path spec;          // absolute path of the sweep file the job runs
  std::filesystem::path out;           // absolute path of the results folder
  std::filesystem::path script;        // where this script is written (named in its messages); the job logs go beside it
  std::filesystem::path array_script;  // the final job's array script (array mode)
  int nodes = 1;
  int ntasks_per_node = 1;
  int cpus_per_task = 1;
  int gpus_per_task = 0;
  // Several ranks a GPU ([sweep] runs_per_gpu = k): the job asks for whole GPUs per node
  // (--gres=gpu:G) and runs k × G tasks on each, every task seeing the node's G GPUs; lrbench
  // binds each rank to one by its local rank. gpus_per_task is 0 then.
  int runs_per_gpu = 1;
  int gpus_per_node = 0;
  std::optional<std::int64_t> time_seconds;  // none: the partition's default
  std::string partition, account;            // empty: the cluster's default
  std::optional<ArraySpec> array;            // set: one shard per array task
  int signal_lead_seconds = 120;
  int max_no_progress = 3;  // requeues in a row without progress before giving up
  bool sequential = false;  // a sequential study: the final job chains the arrays of its waves
};

// Checks every field (UserError naming the flag); the renderers call it first.
void check_sbatch_job(const SbatchJob& job);

// The job that runs the sweep: one MPI job, or (array set) one shard per array task.
std::string render_sweep_script(const SbatchJob& job);
// Array mode: the job that merges the shards' results and writes the report.
std::string render_final_script(const SbatchJob& job);

}  // namespace lrb
