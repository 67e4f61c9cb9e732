#pragma once
// `lrbench run`: a sweep from its file to published run files, on one process or on the
// ranks of an MPI job. Resumable: finished runs are skipped, stopped ones continue from
// their checkpoints, damaged result files are quarantined and recomputed.
#include <filesystem>
#include <string>

#include "suite/config/shard.h"

namespace lrb {

struct SweepRunOptions {
  std::filesystem::path spec_file;
  std::filesystem::path out_dir;
  int threads = -1;           // -1: as the sweep says; 0: auto; n: n threads per rank
  bool retry_failed = false;  // run failed runs again (by default a failed run is finished)
  // Only the runs of this shard (by run key): the tasks of a Slurm job array each run one
  // shard of the same sweep into the same folder. Resume, skipping and the exit code count
  // this shard's runs only.
  Shard shard;
  std::string data_cache;     // --data-cache: a folder, "none", or "" for the default (suite/run/data_cache.h)
};

// Returns the process exit code (suite/core/exit_codes.h).
int run_sweep(const SweepRunOptions& options);

}  // namespace lrb
