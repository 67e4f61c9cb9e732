#include "suite/sweep/resume_scan.h"

#include <fmt/core.h>

#include <cstdio>
#include <string_view>
#include <system_error>

#include "suite/core/errors.h"
#include "suite/core/files.h"
#include "suite/store/results_index.h"
#include "suite/store/run_file.h"

namespace lrb {

namespace fs = std::filesystem;

namespace {

// Runs finished in DIR/sweep.h5 whose run files are gone (a folder merged, then cleaned or
// copied as sweep.h5 alone) are put back into runs/ as they were stored, not run again:
// report, status and merge then read the same runs. A damaged copy is run again; a
// sweep.h5 unusable as a whole is said, and its runs run again.
void restore_merged_runs(const fs::path& out, const std::vector<RunSpec>& runs, const std::vector<std::size_t>& mine,
                         bool retry_failed) {
  const ResultsLayout where(out);
  std::vector<std::string> missing;
  std::error_code ec;
  for (const std::size_t i : mine)
    if (!fs::exists(fs::symlink_status(where.run_file(runs[i].key), ec))) missing.push_back(runs[i].key);
  int restored = 0;
  try {
    for_each_merged_run(out, missing, [&](const std::string& key, std::string_view bytes, RunFileCheck&& check) {
      if (!check.valid()) {
        fmt::print(stderr, "lrbench: {}'s copy of run {} is damaged ({}); the run will be recomputed\n",
                   where.merged().string(), key.substr(0, 12), check.reason);
        return;
      }
      const RunStatus st = check.record->status;
      if (st == RunStatus::Stopped || (st == RunStatus::Failed && retry_failed)) return;
      if (bytes.empty()) write_run_file(where.run_file(key), *check.record);  // a sweep.h5 of schema_version 1
      else write_file_atomic(where.run_file(key), bytes);
      ++restored;
    });
  } catch (const UserError& e) {
    fmt::print(stderr, "lrbench: {}; the runs without a run file will be run\n", e.what());
  }
  if (restored > 0)
    fmt::print(stderr, "lrbench: restored {} finished run(s) from {} into {} (their run files were missing)\n", restored,
               where.merged().string(), where.runs().string());
}

}  // namespace

ScanResult scan_for_resume(const fs::path& out, const std::vector<RunSpec>& runs, const std::vector<std::size_t>& mine,
                           bool retry_failed, StaleScope stale_scope, bool keep_records) {
  ScanResult r;
  for (const auto& p : clear_stale_temporaries(out, stale_scope))
    fmt::print(stderr, "lrbench: removed a stale temporary file {}\n", p.string());
  restore_merged_runs(out, runs, mine, retry_failed);
  for (const std::size_t i : mine) {
    const RunSpec& run = runs[i];
    const fs::path file = ResultsLayout(out).run_file(run.key);
    if (!fs::exists(file)) {
      r.pending.push_back(run.index);
      continue;
    }
    RunFileCheck check = read_run_file(file);
    if (!check.valid()) {
      const fs::path moved = quarantine_bad_file(out, file, check.reason);
      fmt::print(stderr, "lrbench: {} is damaged ({}); moved to {} and the run will be recomputed\n", file.string(),
                 check.reason, moved.string());
      r.pending.push_back(run.index);
      continue;
    }
    const RunStatus st = check.record->status;
    if (st == RunStatus::Ok || (st == RunStatus::Failed && !retry_failed)) {
      ++r.finished;
      if (keep_records) r.finished_records.push_back(index_view(std::move(*check.record)));
      if (st == RunStatus::Failed) ++r.finished_failed;
      // A process killed after publishing the run file and before removing the run's
      // checkpoint leaves one behind; the run is finished, so nothing will resume from it.
      std::error_code ec;
      if (fs::remove(ResultsLayout(out).checkpoint(run.key), ec))
        fmt::print(stderr, "lrbench: removed the checkpoint of finished run {}\n", run.key.substr(0, 12));
    } else {
      r.pending.push_back(run.index);
    }
  }
  return r;
}

void read_other_shards(const fs::path& out, const std::vector<RunSpec>& runs, const std::vector<std::size_t>& mine,
                       std::vector<RunRecord>& records) {
  std::vector<bool> is_mine(runs.size(), false);
  for (std::size_t i : mine) is_mine[i] = true;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (is_mine[i]) continue;
    const fs::path file = ResultsLayout(out).run_file(runs[i].key);
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) continue;
    RunFileCheck check = read_run_file(file);
    if (check.valid() && check.record->status != RunStatus::Stopped) records.push_back(index_view(std::move(*check.record)));
  }
}

}  // namespace lrb
