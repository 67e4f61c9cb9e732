#include "suite/report/report_input.h"

#include <map>
#include <optional>
#include <set>

#include "suite/core/errors.h"
#include "suite/core/files.h"
#include "suite/core/text.h"
#include "suite/store/results_index.h"
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
  std::map<std::string, std::size_t> by_key;
  for (const auto& dir : dirs) {
    in.sources.push_back(dir.string());
    ResultsScan scan = read_results(dir, in.notes);
    std::set<std::string> sweeps;  // the sweeps the runs say they belong to
    std::set<std::string> keys;
    for (const auto& r : scan.runs) {
      keys.insert(r.key);
      if (r.provenance.is_object() && r.provenance.contains("sweep") && r.provenance.at("sweep").is_string())
        sweeps.insert(r.provenance.at("sweep").get<std::string>());
    }
    if (sweeps.size() > 1)
      in.notes.push_back(dir.string() + " holds the runs of " + std::to_string(sweeps.size()) + " different sweeps (" +
                         join(std::vector<std::string>(sweeps.begin(), sweeps.end()), ", ") +
                         "), mixed in these tables; write each sweep to its own --out folder");
    in.runs.reserve(in.runs.size() + scan.runs.size());
    for (auto& r : scan.runs) {
      auto [it, fresh] = by_key.emplace(r.key, in.runs.size());
      if (fresh) {
        in.runs.push_back(std::move(r));
        continue;
      }
      // Same key, same experiment: one of them counts. An ok run beats a failed attempt.
      RunRecord& kept = in.runs[it->second];
      in.notes.push_back("run " + r.key.substr(0, 12) + " is in more than one folder (" + dir.string() + "); counted once");
      if (kept.status != RunStatus::Ok && r.status == RunStatus::Ok) kept = std::move(r);
    }
    for (auto& b : scan.bad) in.bad.push_back(std::move(b));
    const std::optional<SweepManifest> manifest = read_sweep_manifest(dir);
    if (!manifest) continue;
    const std::set<std::string> listed(manifest->runs.begin(), manifest->runs.end());
    std::size_t strangers = 0;
    for (const auto& k : keys) strangers += listed.count(k) == 0;
    if (strangers > 0)
      in.notes.push_back(std::to_string(strangers) + " run(s) in " + dir.string() + " are not runs of the sweep '" +
                         manifest->sweep + "' its sweep.json lists (another sweep, or an earlier "
                         "version of this one), and are shown with it");
    for (const auto& s : manifest->skipped) in.skipped.push_back(s.what + ": " + s.reason);
    for (const auto& claim : manifest->claims) {
      // The same claim from two folders (a sweep resumed elsewhere) counts once.
      bool seen = false;
      for (const auto& k : in.claims) seen = seen || k.to_json() == claim.to_json();
      if (!seen) in.claims.push_back(claim);
    }
  }
  return in;
}

}  // namespace lrb
