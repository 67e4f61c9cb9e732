#pragma once
// Where a sequential study stands, read from its folder without changing anything: its
// judgement (suite/report/claims/sequential_claims.h) on the finished runs, the runs of the current
// wave still to finish, and its time against its budget. `lrbench status` prints it for the
// Slurm scripts (which requeue while a wave has runs left, and chain the waves of an array);
// `lrbench plan` starts from it.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "suite/report/claims/sequential_claims.h"
#include "suite/store/sweep_manifest.h"

namespace lrb {

struct StudyProgress {
  StudyJudgement judgement;
  std::vector<std::string> finished_keys;  // runs of the study finished (ok or failed)
  std::vector<std::string> wave_keys;      // runs the current wave needs and that have not finished
  double spent_seconds = 0;
  std::optional<double> budget_seconds;
};

// `manifest` must be a sequential study's (with wave_runs). UserError for a damaged study log.
StudyProgress study_progress(const std::filesystem::path& dir, const SweepManifest& manifest, const ClaimSettings& settings = {});

// "running", "decided", "max-reached", "budget-spent": one word, for status lines.
const char* study_state_word(WavePlan::End e);

}  // namespace lrb
