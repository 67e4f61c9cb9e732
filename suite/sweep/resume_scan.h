#pragma once
// What a results folder already holds of a sweep: finished runs are skipped, damaged run
// files quarantined and run again, stale temporaries and finished runs' checkpoints
// removed. Rank 0 scans; a shard scans only its own runs.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <vector>

#include "suite/config/expand.h"
#include "suite/store/results_folder.h"
#include "suite/store/run_record.h"

namespace lrb {

struct ScanResult {
  std::vector<std::int64_t> pending;
  int finished = 0, finished_failed = 0;
  std::vector<RunRecord> finished_records;  // kept for a sequential study's judge (index views)
};

// Looks at `mine` (indices into runs) only: a shard never touches another shard's files.
ScanResult scan_for_resume(const std::filesystem::path& out, const std::vector<RunSpec>& runs, const std::vector<std::size_t>& mine,
                           bool retry_failed, StaleScope stale_scope, bool keep_records);

// A shard of a sequential study judges its looks on every shard's finished runs: reads the
// others' run files (never moves or rewrites them; a damaged one counts as not finished).
void read_other_shards(const std::filesystem::path& out, const std::vector<RunSpec>& runs, const std::vector<std::size_t>& mine,
                       std::vector<RunRecord>& records);

}  // namespace lrb
