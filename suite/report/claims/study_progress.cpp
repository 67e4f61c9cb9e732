#include "suite/report/claims/study_progress.h"

#include <set>
#include <string_view>

#include "suite/core/errors.h"
#include "suite/store/results_index.h"
#include "suite/store/study_log.h"

namespace lrb {

namespace {

// The study's runs whose files are gone, as DIR/sweep.h5 holds them (`lrbench run` restores
// them rather than run them again). A sweep.h5 unusable as a whole adds none: its runs are
// missing, as `run` and `status` (which says why) count them.
void add_merged_runs(const std::filesystem::path& dir, const SweepManifest& manifest, std::vector<RunRecord>& runs) {
  std::set<std::string> have;
  for (const auto& r : runs) have.insert(r.key);
  std::vector<std::string> missing;
  for (const auto& key : manifest.runs)
    if (!have.count(key)) missing.push_back(key);
  try {
    for_each_merged_run(dir, missing, [&](const std::string&, std::string_view, RunFileCheck&& check) {
      if (check.valid()) runs.push_back(std::move(*check.record));
    });
  } catch (const UserError&) {
  }
}

}  // namespace

StudyProgress study_progress(const std::filesystem::path& dir, const SweepManifest& manifest, const ClaimSettings& settings) {
  LRB_CHECK(manifest.sequential.has_value(), "study_progress needs a sequential study");
  if (manifest.wave_runs.size() != manifest.runs.size())
    throw UserError(ResultsLayout(dir).manifest().string() + " lists no seeds per run for its sequential design (written by an "
                    "older lrbench): run the sweep again to rewrite it, or give the sweep file with --spec");
  StudyProgress p;
  const StudyLog log = read_study_log(dir);
  p.spent_seconds = log.spent_seconds();
  p.budget_seconds = manifest.budget_seconds;
  std::vector<RunRecord> runs;
  std::error_code ec;
  if (std::filesystem::is_directory(ResultsLayout(dir).runs(), ec)) {
    IndexRefresh refresh;
    IndexOptions read_only;
    read_only.write = false;
    ResultsScan scan = scan_runs_indexed(dir, refresh, read_only);
    runs = std::move(scan.runs);
  }
  add_merged_runs(dir, manifest, runs);
  const std::set<std::string> listed(manifest.runs.begin(), manifest.runs.end());
  std::set<std::string> finished;
  std::vector<RunRecord> mine;  // this study's runs only: the judge must not read strangers
  for (auto& r : runs) {
    if (!listed.count(r.key)) continue;
    if (r.status != RunStatus::Stopped) finished.insert(r.key);
    mine.push_back(std::move(r));
  }
  const bool budget_spent = log.ended == wave_end_name(WavePlan::End::BudgetSpent) ||
                            (manifest.budget_seconds && p.spent_seconds >= *manifest.budget_seconds);
  p.judgement = judge_sequential_study(*manifest.sequential, manifest.claims, mine, budget_spent, settings);
  const WavePlan& plan = p.judgement.plan;
  for (std::size_t i = 0; i < manifest.runs.size(); ++i) {
    const std::string& key = manifest.runs[i];
    if (finished.count(key)) {
      p.finished_keys.push_back(key);
      continue;
    }
    if (plan.end == WavePlan::End::Running && run_in_wave(manifest.wave_runs[i], *manifest.sequential, plan.open, plan.wave_seeds))
      p.wave_keys.push_back(key);
  }
  return p;
}

const char* study_state_word(WavePlan::End e) {
  switch (e) {
    case WavePlan::End::Running: return "running";
    case WavePlan::End::AllDecided: return "decided";
    case WavePlan::End::MaxReached: return "max-reached";
    case WavePlan::End::BudgetSpent: return "budget-spent";
  }
  return "?";
}

}  // namespace lrb
