#include "suite/sweep/results_folder_setup.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <optional>
#include <string>

#include "suite/core/errors.h"
#include "suite/store/results_folder.h"
#include "suite/store/study_log.h"
#include "suite/store/sweep_manifest.h"

namespace lrb {

namespace fs = std::filesystem;

namespace {

// A study's claims are part of its design: its looks were judged, and its later waves
// drawn, for the claims it had when it first looked (recorded in DIR/sweep.json). Changing
// one afterwards would re-judge the same looks as if it had been the claim all along. Words
// (statement, source) may change; what is judged may not.
void check_same_claims(const fs::path& out, const std::vector<ClaimSpec>& recorded, const SweepSpec& spec,
                       const std::vector<ClaimSpec>& claims) {
  const std::string manifest = ResultsLayout(out).manifest().string();
  const std::string fix = "; a study's claims cannot change once it has looked at results: keep the claim as it was, or "
                          "study the new claim in another --out folder (a new study: it takes an identity of its own and draws new seeds)";
  for (const ClaimSpec& now : claims) {
    const auto was = std::find_if(recorded.begin(), recorded.end(), [&](const ClaimSpec& c) { return c.name == now.name; });
    if (was == recorded.end())
      throw UserError(now.where, "claim '" + now.name + "' is new to the study in " + out.string() + " (" + manifest + ")" + fix);
    if (was->definition() != now.definition())
      throw UserError(now.where, "claim '" + now.name + "' changed since the study in " + out.string() + " looked: it was " +
                                     was->definition().dump() + " (" + manifest + ")" + fix);
  }
  for (const ClaimSpec& was : recorded) {
    const bool kept = std::any_of(claims.begin(), claims.end(), [&](const ClaimSpec& c) { return c.name == was.name; });
    if (!kept)
      throw UserError(spec.file + ": claim '" + was.name + "' of the study in " + out.string() + " (" + manifest +
                      ") is missing" + fix);
  }
}

// One results folder holds one sweep (by name): two sweeps written into one folder would be
// mixed in its tables. The same name again extends or resumes it.
void check_same_sweep(const fs::path& out, const SweepSpec& spec, const ExpandedSweep& ex) {
  std::optional<SweepManifest> manifest;
  try {
    manifest = read_sweep_manifest(out);
  } catch (const UserError&) {
    return;  // a damaged manifest is ours to rewrite
  }
  if (!manifest) return;
  const std::string& name = manifest->sweep;
  if (name != spec.sweep.name)
    throw UserError(out.string() + " holds the results of sweep '" + name + "' (" + ResultsLayout(out).manifest().string() +
                    "); write sweep '" + spec.sweep.name + "' to another --out folder, so that reports do not mix them");
  // A sequential design's looks are planned from its first seeds on: changing first, step or
  // max on the way, or starting one on runs already seen, would spend the error twice.
  const auto& was = manifest->sequential;
  const auto& now = spec.sweep.sequential;
  if (was && now && *was != *now)
    throw UserError(spec.sweep.sequential_at, "this study started with seeds = { " + was->text() + " } (" +
                                                  ResultsLayout(out).manifest().string() + "); a sequential design cannot change "
                                                  "once it has looked at results: keep it, or start the new design in another --out folder");
  const ResultsLayout where(out);
  const bool seen = (fs::exists(where.runs()) && !fs::is_empty(where.runs())) || fs::exists(where.merged());  // merged-only too
  if (!was && now && !manifest->runs.empty() && seen)
    throw UserError(spec.sweep.sequential_at, out.string() + " holds runs of this sweep as a fixed design; a sequential "
                                                             "design must start before any result is seen: write it to another --out folder");
  if (was && !now)
    throw UserError(out.string() + " holds a sequential study (seeds = { " + was->text() + " }); give the same design, or write "
                    "the fixed design to another --out folder");
  if (was && seen) check_same_claims(out, manifest->claims, spec, ex.claims);
}

// The shards of one sweep write the folder together, holding .lock shared; a whole sweep
// holds it exclusively. The shard count in use is recorded in DIR/.shard-layout: shards of
// another count (0/2 and 0/3 share runs) are refused while any shard is at work.
std::unique_ptr<FolderLock> lock_for_shard(const fs::path& out, const Shard& shard) {
  const ResultsLayout where(out);
  const fs::path layout = where.shard_layout();
  FileLock layout_lock(where.shard_layout_lock());  // serialises shard starts (brief)
  bool alone = false;
  try {
    FolderLock probe(where.folder_lock());  // exclusive: nobody else writes the folder now
    alone = true;
  } catch (const UserError&) {
  }
  if (alone) {
    write_file_atomic(layout, nlohmann::json{{"count", shard.count}}.dump() + "\n");
  } else {
    int count = 0;
    try {
      count = nlohmann::json::parse(read_user_file(layout, kMaxManifestBytes, "the shard layout")).at("count").get<int>();
    } catch (const std::exception&) {
      count = 0;  // unknown: another writer without a layout (a whole sweep) is refused below
    }
    if (count != shard.count)
      throw UserError("--shard " + shard.text() + ": " + out.string() + " is being written by " +
                      (count > 0 ? "the shards of a " + std::to_string(count) + "-way split (I/" + std::to_string(count) + ")"
                                 : std::string("another lrbench process")) +
                      "; shards of different counts would run the same runs twice: use --shard I/" +
                      (count > 0 ? std::to_string(count) : std::string("N")) + ", or wait for them to finish");
  }
  return std::make_unique<FolderLock>(where.folder_lock(), FolderLock::Mode::Shared);
}

void write_sweep_manifest(const fs::path& out, const SweepSpec& spec, const ExpandedSweep& ex) {
  write_sweep_manifest(out, make_sweep_manifest(spec, ex));
  write_file_atomic(ResultsLayout(out).sweep_file_copy(), read_file(spec.file));
}

}  // namespace

OpenedFolder open_results_folder(const fs::path& out, const SweepSpec& spec, const ExpandedSweep& ex,
                                 const std::vector<std::size_t>& mine, const Shard& shard, bool retry_failed,
                                 const std::string& study_id) {
  OpenedFolder opened;
  const ResultsLayout where(out);
  if (!study_id.empty() && !spec.sweep.sequential)
    throw UserError("--study-id names a sequential study; " + spec.file + " is a fixed design (seeds = N)");
  fs::create_directories(where.runs());
  fs::create_directories(where.checkpoints());
  if (shard.whole()) {
    opened.lock = std::make_unique<FolderLock>(where.folder_lock());
  } else {
    // The shards of one sweep write the folder together (their runs are disjoint); a
    // whole sweep, shards of another count, or a second process for the same shard,
    // are refused meanwhile.
    opened.lock = lock_for_shard(out, shard);
    opened.shard_lock = std::make_unique<FolderLock>(where.shard_lock(shard.index, shard.count));
  }
  check_same_sweep(out, spec, ex);
  if (spec.sweep.sequential) opened.study_id = settle_study_id(out, study_id);
  opened.scan = scan_for_resume(out, ex.runs, mine, retry_failed, shard.whole() ? StaleScope::AnyHost : StaleScope::ThisHostOnly,
                                spec.sweep.sequential.has_value());
  if (spec.sweep.sequential && !shard.whole()) read_other_shards(out, ex.runs, mine, opened.scan.finished_records);
  write_sweep_manifest(out, spec, ex);
  return opened;
}

}  // namespace lrb
