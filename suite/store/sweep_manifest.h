#pragma once
// DIR/sweep.json: what `lrbench run` records when a sweep starts — the sweep's name and
// file, its run keys, the combinations it skipped and its claims. One reader for all that
// read it (report, status, the sweep runner's same-sweep check): a damaged or hand-edited
// manifest is one clear UserError everywhere, never a crash or a path outside runs/.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "suite/config/claim_spec.h"
#include "suite/config/expand.h"
#include "suite/config/sequential_design.h"

namespace lrb {

struct SweepManifest {
  std::string sweep;                        // the sweep's name
  std::string file;                         // the sweep file, as given to lrbench run
  std::vector<std::string> runs;            // run keys (is_run_key)
  std::vector<SkippedCombination> skipped;  // combinations the sweep could not run
  std::vector<ClaimSpec> claims;            // the sweep's [[claim]]s, checked
  // A sequential study's design (seeds = { first, step, max }) and budget: the report
  // replays its looks from the run files (suite/report/claims/sequential_claims.h).
  std::optional<SequentialSeeds> sequential;
  std::optional<double> budget_seconds;
  std::vector<WaveRun> wave_runs;  // sequential: per run (as `runs`), its seed and the claims it feeds

  nlohmann::json to_json() const;
  // Throws UserError saying which field is wrong and how. "skipped", "claims" and "file"
  // may be missing (older manifests); "sweep" and "runs" may not.
  static SweepManifest from_json(const nlohmann::json& j);
};

// The manifest of an expanded sweep (what `lrbench run` writes, and what `status --spec` reads).
SweepManifest make_sweep_manifest(const SweepSpec& spec, const ExpandedSweep& ex);

// 64 lowercase hex digits: the sha256 a run file is named by (runs/<key>.h5).
bool is_run_key(std::string_view text);

// Writes DIR/sweep.json atomically.
void write_sweep_manifest(const std::filesystem::path& dir, const SweepManifest& manifest);

// DIR/sweep.json, or nullopt when there is none. Throws UserError naming the file, what is
// wrong, and that running the sweep again rewrites it.
std::optional<SweepManifest> read_sweep_manifest(const std::filesystem::path& dir);

}  // namespace lrb
