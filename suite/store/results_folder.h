#pragma once
// Reading, cleaning and merging a results folder DIR (the --out of `lrbench run`); where
// each file lives: results_layout.h. Rules: results/SCHEMA.md.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "suite/store/results_layout.h"
#include "suite/store/run_file.h"
#include "suite/store/run_record.h"

namespace lrb {

struct BadResult {
  std::filesystem::path file;  // the bad file (a bad group of sweep.h5: sweep.h5, the reason names the group)
  std::string reason;
};

struct ResultsScan {
  std::vector<RunRecord> runs;  // valid runs, by run key
  std::vector<BadResult> bad;   // invalid files, by path; each counts as missing, never as data
};

// The most bytes read from a results folder's manifest (DIR/sweep.json: one run key per
// run) or shard layout: far more than any sweep within the run limit needs.
inline constexpr std::uintmax_t kMaxManifestBytes = std::uintmax_t{256} << 20;

// Validates every DIR/runs/*.h5 (temporary names skipped). No runs/ folder: an empty scan.
ResultsScan scan_runs(const std::filesystem::path& dir);

// Removes the temporary files that killed processes left in DIR/runs and DIR/checkpoints
// (at any depth), DIR/quarantine and DIR itself (a sweep.h5 being merged), and returns them. Files of processes still alive on this host are kept; call it before
// other hosts start writing into DIR (the sweep start, under the folder lock).
// With ThisHostOnly, temporaries written on other hosts are left alone: the shards of a
// job array write one folder together, and another host's process cannot be checked.
enum class StaleScope { AnyHost, ThisHostOnly };
std::vector<std::filesystem::path> clear_stale_temporaries(const std::filesystem::path& dir,
                                                           StaleScope scope = StaleScope::AnyHost);

// Moves `file` to DIR/quarantine/<name>.<UTC timestamp>, with <that>.reason beside it
// holding `reason`, so that nothing is lost and the run can be recomputed. Returns the new path.
std::filesystem::path quarantine_bad_file(const std::filesystem::path& dir, const std::filesystem::path& file,
                                          const std::string& reason);

// Writes DIR/sweep.h5 atomically: the bytes of every valid run file of DIR/runs, whole, as
// one dataset each, the bad files with their reasons, and an index. A run file is read once
// and checked as far as RunRead::Identity. Returns how many runs it holds and the bad files
// it left out. Throws UserError when DIR has no runs/ folder.
struct MergeSummary {
  std::size_t runs = 0;
  std::vector<BadResult> bad;
};
MergeSummary merge_results(const std::filesystem::path& dir);

// Reads a sweep.h5, validating every run in it as read_run_file validates a file (a run
// file's bytes, or in a sweep.h5 of schema_version 1 a group copied from one). Runs that
// fail and the bad files recorded at merge time are listed in `bad`. Throws UserError when
// the file as a whole cannot be used.
ResultsScan read_sweep_file(const std::filesystem::path& path);

// The runs of DIR/sweep.h5 among `keys` (those whose run files are gone: a folder merged and
// then cleaned, or copied as sweep.h5 alone), one at a time: each key sweep.h5 holds, with
// the check of its stored run as read_run_file gives it and, for a sweep.h5 of
// schema_version 2, the run file's bytes (empty otherwise). Nothing when there is no
// sweep.h5; UserError when it cannot be used as a whole (as read_sweep_file).
void for_each_merged_run(const std::filesystem::path& dir, const std::vector<std::string>& keys,
                         const std::function<void(const std::string& key, std::string_view bytes, RunFileCheck&& check)>& visit);

// DIR/runs when it exists, else DIR/sweep.h5; a UserError saying what to do when neither does.
ResultsScan load_results(const std::filesystem::path& dir);

}  // namespace lrb
