#include "suite/report/report_input.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>

#include "suite/core/errors.h"
#include "suite/core/files.h"
#include "suite/core/text.h"
#include "suite/store/results_index.h"
#include "suite/store/study_log.h"
#include "suite/store/sweep_manifest.h"

namespace lrb {

namespace {

// DIR/runs through its index (refreshed when run files changed), else DIR/sweep.h5.
ResultsScan read_results(const std::filesystem::path& dir, std::vector<std::string>& notes) {
  std::error_code ec;
  if (!std::filesystem::is_directory(ResultsLayout(dir).runs(), ec)) return load_results(dir);
  IndexRefresh refresh;
  ResultsScan scan = scan_runs_indexed(dir, refresh);
  if (!refresh.ignored.empty())
    notes.push_back("the index " + ResultsLayout(dir).index().string() + " was not used (" + refresh.ignored +
                    "); every run file was read" + (refresh.written ? " and the index rebuilt" : ""));
  if (!refresh.write_problem.empty())
    notes.push_back("the index " + ResultsLayout(dir).index().string() + " could not be updated (" +
                    refresh.write_problem + "); the report is right, but the next one will read the " +
                    std::to_string(refresh.read) + " new or changed run file(s) again");
  return scan;
}

}  // namespace

ReportInput load_report_input(const std::vector<std::filesystem::path>& dirs) {
  ReportInput in;
  std::vector<ResultsScan> scans;
  std::vector<std::optional<SweepManifest>> manifests;
  std::vector<std::vector<std::string>> notes(dirs.size());  // each folder's, in the folders' order
  std::size_t total = 0;
  for (const auto& dir : dirs) {
    in.sources.push_back(dir.string());
    scans.push_back(read_results(dir, notes[scans.size()]));
    manifests.push_back(read_sweep_manifest(dir));
    total += scans.back().runs.size();
  }
  // Reserved once, so that the keys by_key views never move. A key found twice is one
  // experiment: one of its runs counts.
  in.runs.reserve(total);
  std::unordered_map<std::string_view, std::size_t> by_key;
  by_key.reserve(total);
  for (std::size_t d = 0; d < dirs.size(); ++d) {
    const std::string folder = dirs[d].string();
    ResultsScan& scan = scans[d];
    in.notes.insert(in.notes.end(), notes[d].begin(), notes[d].end());
    std::set<std::string> sweeps;  // the sweeps the runs say they belong to
    for (const auto& r : scan.runs) {
      const auto sweep = r.provenance.is_object() ? r.provenance.find("sweep") : r.provenance.end();
      if (sweep != r.provenance.end() && sweep->is_string() && !sweeps.count(sweep->get_ref<const std::string&>()))
        sweeps.insert(sweep->get<std::string>());
    }
    if (sweeps.size() > 1)
      in.notes.push_back(folder + " holds the runs of " + std::to_string(sweeps.size()) + " different sweeps (" +
                         join(std::vector<std::string>(sweeps.begin(), sweeps.end()), ", ") +
                         "), mixed in these tables; write each sweep to its own --out folder");
    std::string strangers_note;  // said after the duplicates, as the runs are counted first
    if (const auto& manifest = manifests[d]) {
      std::vector<std::string_view> listed(manifest->runs.begin(), manifest->runs.end());
      std::sort(listed.begin(), listed.end());
      std::set<std::string_view> strangers;  // each key once, however often it occurs
      for (const auto& r : scan.runs)
        if (!std::binary_search(listed.begin(), listed.end(), std::string_view(r.key))) strangers.insert(r.key);
      if (!strangers.empty())
        strangers_note = std::to_string(strangers.size()) + " run(s) in " + folder + " are not runs of the sweep '" +
                         manifest->sweep + "' its sweep.json lists (another sweep, or an earlier "
                         "version of this one), and are shown with it";
    }
    for (auto& r : scan.runs) {
      const auto known = by_key.find(r.key);
      if (known == by_key.end()) {
        in.runs.push_back(std::move(r));
        by_key.emplace(in.runs.back().key, in.runs.size() - 1);
        continue;
      }
      // Same key, same experiment: one of them counts. An ok run beats a failed attempt.
      const std::size_t kept = known->second;
      in.notes.push_back("run " + r.key.substr(0, 12) + " is in more than one folder (" + folder + "); counted once");
      if (in.runs[kept].status != RunStatus::Ok && r.status == RunStatus::Ok) {
        by_key.erase(known);  // it views the key about to be replaced
        in.runs[kept] = std::move(r);
        by_key.emplace(in.runs[kept].key, kept);
      }
    }
    if (!strangers_note.empty()) in.notes.push_back(strangers_note);
    for (auto& b : scan.bad) in.bad.push_back(std::move(b));
    if (!manifests[d]) continue;
    for (const auto& s : manifests[d]->skipped) in.skipped.push_back(s.what + ": " + s.reason);
    if (const auto& design = manifests[d]->sequential) {
      // The same study in two folders (resumed elsewhere) is judged once, on the runs of both.
      const bool seen = std::any_of(in.studies.begin(), in.studies.end(), [&](const SequentialStudy& s) {
        return s.sweep == manifests[d]->sweep && s.design == *design;
      });
      if (!seen) {
        SequentialStudy study{manifests[d]->sweep, *design, manifests[d]->budget_seconds, manifests[d]->claims, 0, "", folder,
                              manifests[d]->runs};
        const StudyLog log = read_study_log(dirs[d]);
        study.spent_seconds = log.spent_seconds();
        study.ended = log.ended;
        in.studies.push_back(std::move(study));
      }
      continue;
    }
    for (const auto& claim : manifests[d]->claims) {
      // The same claim from two folders (a sweep resumed elsewhere) counts once.
      bool seen = false;
      for (const auto& k : in.claims) seen = seen || k.to_json() == claim.to_json();
      if (!seen) in.claims.push_back(claim);
    }
  }
  return in;
}

}  // namespace lrb
