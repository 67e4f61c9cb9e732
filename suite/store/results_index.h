#pragma once
// DIR/runs.index: what `report`, `leaderboard` and `status` need of every run file in
// DIR/runs, in one sealed file, so that a folder of 100,000 runs is not 100,000 HDF5 files
// opened per report. Format and rules: results/SCHEMA.md.
//
// The index is a cache, never a source of truth. Each entry carries the signature of the
// run file it was made from (size, modification and status-change times in nanoseconds,
// inode); an entry is used only while the file still has that signature. A file written,
// replaced, damaged or touched since changes its ctime at least, and is read again; a file
// gone is dropped; a new file is read. A damaged, foreign or older index is ignored whole
// and rebuilt. So a report from the index equals a report from the run files.
//
// An entry holds the run's view (index_view): spec, status, error, metrics, and the parts
// of provenance, records and curves the reports read. Bad files are entries too, with the
// reason their validation gave.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "suite/store/results_folder.h"
#include "suite/store/run_record.h"

namespace lrb {

// Bumped whenever index_view keeps something new: an index of another view is rebuilt.
inline constexpr int kIndexViewVersion = 7;  // 2: world_size kept (a study's plan divides its run time by it); 3: the recorded units and directions of figures not lrbench's own; 4: provenance model kept (same_init warnings); 5: provenance gpu kept in place of gpu_name, which no run wrote (its name labels a GPU run's device); 6: provenance cpu kept (its processor labels a CPU run's device); 7: the versions and BLAS core kept (the same run in two folders with other results says what differs)

// What the reports read of a run (suite/report: cells.cpp, variants.cpp, report_input.cpp):
// everything but the per-step training curves, the run's free-form records other than
// "task" and "probes", and the provenance other than the fields the tables show. A test
// (ResultsIndex.AReportFromTheIndexEqualsOneFromTheRunFiles) holds the reports to it.
RunRecord index_view(RunRecord full);

// stat(2) of a file: what changes whenever its bytes can have changed.
struct FileSignature {
  std::uintmax_t size = 0;
  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;
  std::uint64_t inode = 0;
  bool operator==(const FileSignature& o) const {
    return size == o.size && mtime_ns == o.mtime_ns && ctime_ns == o.ctime_ns && inode == o.inode;
  }
  bool operator!=(const FileSignature& o) const { return !(*this == o); }
};
// nullopt when nothing is there or it is not a regular file.
std::optional<FileSignature> signature_of(const std::filesystem::path& file);
// The same of `name` within the open folder `folder` (or AT_FDCWD).
std::optional<FileSignature> signature_at(int folder, const char* name);

// What one refresh did; `written` is false when the index on disk was already up to date
// or could not be written (`write_problem` says why: a read-only folder, a full disk).
struct IndexRefresh {
  std::size_t runs = 0, bad = 0;  // entries now
  std::size_t reused = 0;         // entries kept without reading their file
  std::size_t read = 0;           // run files read (new, changed, or no usable index)
  std::size_t dropped = 0;        // entries whose file is gone
  std::string ignored;            // why the index on disk was not used ("" when it was, or there was none)
  bool written = false;
  std::string write_problem;
};

struct IndexOptions {
  bool write = true;     // rewrite the index (atomically) when anything changed
  bool rebuild = false;  // read every run file, as if there were no index (`lrbench index --rebuild`)
  bool records = true;   // return the runs; false: only refresh (and count) them
};

// The runs of DIR/runs as scan_runs gives them, each in its index_view, read through the
// index: only files new or changed since it was written are opened. A failure to write the
// index is reported in `refresh`, never thrown: the scan is right either way.
// DIR without runs/: an empty scan.
ResultsScan scan_runs_indexed(const std::filesystem::path& dir, IndexRefresh& refresh, IndexOptions options = {});

// For `status`: the status (and, when stopped, the steps done) of the run file of each key,
// taken from the index where the file is unchanged, else read; a key without a run file
// from DIR/sweep.h5 where that holds it (`merged_problem`: why sweep.h5 could not be read,
// its runs then missing). Never writes.
struct IndexedStatus {
  enum class Kind { Missing, Bad, Run } kind = Kind::Missing;
  RunStatus status = RunStatus::Ok;
  std::int64_t steps_done = 0;  // of a stopped run
};
std::vector<IndexedStatus> run_statuses(const std::filesystem::path& dir, const std::vector<std::string>& run_keys,
                                        std::string* merged_problem = nullptr);

}  // namespace lrb
