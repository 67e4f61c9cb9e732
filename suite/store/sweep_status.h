#pragma once
// How far a sweep (or one shard of it) has got, read from its results folder without
// changing anything: `lrbench status`, and the Slurm job scripts, which requeue a job only
// while runs remain and only while attempts make progress.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace lrb {

struct SweepStatus {
  int total = 0;    // runs asked about
  int ok = 0;       // finished ok
  int failed = 0;   // finished failed (a failed run is finished unless retried)
  int stopped = 0;  // stopped with a checkpoint to resume from
  std::int64_t stopped_steps = 0;  // training steps the stopped runs have done
  int missing = 0;  // not started, or a damaged file (that counts as missing, never as data)
  std::string note;  // why DIR/sweep.h5 could not stand in for missing run files, "" when it could or was not needed
  int finished() const { return ok + failed; }
  int remaining() const { return total - finished(); }
};

// Reads DIR/runs/<key>.h5 of each key, validating it, or its entry in DIR/runs.index while
// the file is unchanged (results_index.h); a run whose file is gone counts as DIR/sweep.h5
// holds it (a merged-only folder: `lrbench run` restores such runs rather than run them).
SweepStatus sweep_status(const std::filesystem::path& dir, const std::vector<std::string>& run_keys);

// One line of key=value fields, for people and for scripts; any change between two calls
// means progress: "total=8 finished=3 ok=3 failed=0 stopped=1 steps=120 missing=4 remaining=5".
std::string status_line(const SweepStatus& s);

}  // namespace lrb
