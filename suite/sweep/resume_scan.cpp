#include "suite/sweep/resume_scan.h"

#include <fmt/core.h>

#include <cstdio>

#include "suite/store/results_index.h"
#include "suite/store/run_file.h"

namespace lrb {

namespace fs = std::filesystem;

ScanResult scan_for_resume(const fs::path& out, const std::vector<RunSpec>& runs, const std::vector<std::size_t>& mine,
                           bool retry_failed, StaleScope stale_scope, bool keep_records) {
  ScanResult r;
  for (const auto& p : clear_stale_temporaries(out, stale_scope))
    fmt::print(stderr, "lrbench: removed a stale temporary file {}\n", p.string());
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
