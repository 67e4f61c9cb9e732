#pragma once
// What a report reads: the runs of one or more results folders (runs/ or sweep.h5), the
// bad files found on the way, and the combinations each sweep skipped (DIR/sweep.json).
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "suite/config/claim_spec.h"
#include "suite/config/sequential_design.h"
#include "suite/store/results_folder.h"

namespace lrb {

// A sequential study found in a folder (DIR/sweep.json with a design): its claims are judged
// look by look (suite/report/claims/sequential_claims.h), not as a fixed design.
struct SequentialStudy {
  std::string sweep;
  SequentialSeeds design;
  std::optional<double> budget_seconds;
  std::vector<ClaimSpec> claims;
  double spent_seconds = 0;  // DIR/study.json
  std::string ended;         // as the study log says ("" while it runs, or with no log)
  std::string folder;
  std::vector<std::string> runs;  // its run keys (DIR/sweep.json): the judge reads only these
  std::string study_id;           // DIR/study.json: what its seeds are mixed with ("" before identities)
};

struct ReportInput {
  std::vector<RunRecord> runs;       // by run key; a key found in two folders once (ok preferred)
  std::vector<BadResult> bad;        // each counts as missing, never as data
  std::vector<std::string> skipped;  // "what: reason" of combinations a sweep could not run
  std::vector<std::string> sources;  // the folders, as given
  std::vector<std::string> notes;    // e.g. the same run found in two folders
  std::vector<ClaimSpec> claims;     // the fixed designs' [[claim]]s (DIR/sweep.json), each once
  std::vector<SequentialStudy> studies;  // the sequential designs, each once
};

// Throws UserError when a folder holds no results (load_results says what to do).
ReportInput load_report_input(const std::vector<std::filesystem::path>& dirs);

}  // namespace lrb
