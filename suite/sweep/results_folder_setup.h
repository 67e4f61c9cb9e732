#pragma once
// Rank 0's part of starting a job: the results folder made and locked (whole sweep:
// exclusively; a shard: shared, with the shard layout checked), checked to hold this sweep,
// scanned for what is finished, and its manifest written.
#include <cstddef>
#include <filesystem>
#include <memory>
#include <vector>

#include "suite/config/expand.h"
#include "suite/config/shard.h"
#include "suite/config/sweep_spec.h"
#include "suite/core/files.h"
#include "suite/sweep/resume_scan.h"

namespace lrb {

struct OpenedFolder {
  std::unique_ptr<FolderLock> lock;        // held until the job ends
  std::unique_ptr<FolderLock> shard_lock;  // a shard's own, against a second process for it
  ScanResult scan;
  std::string study_id;  // a sequential study's identity (settle_study_id), "" otherwise
};

// Throws UserError (the user can fix it: another sweep's folder, a changed sequential
// design, shards of another count at work) or another exception (the disk, permissions).
// `study_id`: what a new sequential study is to be called ("" for a random identity).
OpenedFolder open_results_folder(const std::filesystem::path& out, const SweepSpec& spec, const ExpandedSweep& ex,
                                 const std::vector<std::size_t>& mine, const Shard& shard, bool retry_failed,
                                 const std::string& study_id = "");

}  // namespace lrb
