#pragma once
// What a report reads: the runs of one or more results folders (runs/ or sweep.h5), the
// bad files found on the way, and the combinations each sweep skipped (DIR/sweep.json).
#include <filesystem>
#include <string>
#include <vector>

#include "suite/config/claim_spec.h"
#include "suite/store/results_folder.h"

namespace lrb {

struct ReportInput {
  std::vector<RunRecord> runs;       // by run key; a key found in two folders once (ok preferred)
  std::vector<BadResult> bad;        // each counts as missing, never as data
  std::vector<std::string> skipped;  // "what: reason" of combinations a sweep could not run
  std::vector<std::string> sources;  // the folders, as given
  std::vector<std::string> notes;    // e.g. the same run found in two folders
  std::vector<ClaimSpec> claims;     // the sweeps' [[claim]]s (DIR/sweep.json), each once
};

// Throws UserError when a folder holds no results (load_results says what to do).
ReportInput load_report_input(const std::vector<std::filesystem::path>& dirs);

}  // namespace lrb
