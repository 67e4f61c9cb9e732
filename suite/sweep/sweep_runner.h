#pragma once
// `lrbench run`: a sweep from its file to published run files, on one process or on the
// ranks of an MPI job. Resumable: finished runs are skipped, stopped ones continue from
// their checkpoints, damaged result files are quarantined and recomputed.
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "suite/config/claim_spec.h"
#include "suite/config/sequential_design.h"
#include "suite/config/shard.h"
#include "suite/run/sequential_source.h"

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
  // --only: run these runs only (run keys, or their first 8 or more hex digits), in a whole
  // sweep's folder (suite/sweep/run_selection.h); `lrbench ab` runs a cell at a time so.
  std::vector<std::string> only;
  std::string data_cache;     // --data-cache: a folder, "none", or "" for the default (suite/run/data_cache.h)
  // --study-id: a new sequential study takes this identity instead of a random one (a replay
  // of a study's seeds, asked for by name); refused where the folder's study has another.
  std::string study_id;
  // For a sequential study (seeds = { first, step, max }): makes the judge of its looks.
  // The run layer does not evaluate claims; the CLI gives the report's judge
  // (suite/report/claims/sequential_claims.h). Without it a sequential sweep is refused.
  std::function<StudyJudge(const SequentialSeeds&, const std::vector<ClaimSpec>&)> make_judge;
};

// Returns the process exit code (suite/core/exit_codes.h).
int run_sweep(const SweepRunOptions& options);

}  // namespace lrb
