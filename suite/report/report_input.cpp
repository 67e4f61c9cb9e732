#include "suite/report/report_input.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>

#include "suite/core/errors.h"
#include "suite/core/files.h"
#include "suite/core/text.h"
#include "suite/report/run_provenance.h"
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

// A note when a folder's runs say they belong to several sweeps.
std::optional<std::string> mixed_sweeps_note(const std::string& folder, const ResultsScan& scan) {
  std::set<std::string> sweeps;  // the sweeps the runs say they belong to
  for (const auto& r : scan.runs) {
    const auto sweep = r.provenance.is_object() ? r.provenance.find("sweep") : r.provenance.end();
    if (sweep != r.provenance.end() && sweep->is_string() && !sweeps.count(sweep->get_ref<const std::string&>()))
      sweeps.insert(sweep->get<std::string>());
  }
  if (sweeps.size() <= 1) return std::nullopt;
  return folder + " holds the runs of " + std::to_string(sweeps.size()) + " different sweeps (" +
         join(std::vector<std::string>(sweeps.begin(), sweeps.end()), ", ") +
         "), mixed in these tables; write each sweep to its own --out folder";
}

// A note when a folder holds runs its manifest does not list ("" when none).
std::string strangers_note(const std::string& folder, const ResultsScan& scan, const std::optional<SweepManifest>& manifest) {
  if (!manifest) return "";
  std::vector<std::string_view> listed(manifest->runs.begin(), manifest->runs.end());
  std::sort(listed.begin(), listed.end());
  std::set<std::string_view> strangers;  // each key once, however often it occurs
  for (const auto& r : scan.runs)
    if (!std::binary_search(listed.begin(), listed.end(), std::string_view(r.key))) strangers.insert(r.key);
  if (strangers.empty()) return "";
  return std::to_string(strangers.size()) + " run(s) in " + folder + " are not runs of the sweep '" + manifest->sweep +
         "' its sweep.json lists (another sweep, or an earlier version of this one), and are shown with it";
}

// The figures (and the status) in which two runs of the same key differ; NaN equals NaN.
std::vector<std::string> differing_figures(const RunRecord& a, const RunRecord& b) {
  std::vector<std::string> out;
  if (a.status != b.status) out.push_back("status");
  const auto same = [](double x, double y) { return x == y || (std::isnan(x) && std::isnan(y)); };
  for (const auto& [name, v] : a.metrics) {
    const auto it = b.metrics.find(name);
    if (it == b.metrics.end() || !same(v, it->second)) out.push_back(name);
  }
  for (const auto& [name, v] : b.metrics)
    if (!a.metrics.count(name)) out.push_back(name);
  return out;
}

// The runs of one folder also found in an earlier one: said in one note, never one per run.
struct Duplicates {
  std::size_t runs = 0, differing = 0;
  std::map<std::string, std::size_t> figures;  // a figure that differs: in how many runs
  std::set<std::string> provenance;            // what differs between the differing runs' sides
  std::string example;                         // one differing run, its figure on each side
  std::set<std::string> earlier;               // the folders that held them first
};

void tally_duplicate(Duplicates& d, const RunRecord& kept, const RunRecord& again, const std::string& kept_folder) {
  ++d.runs;
  d.earlier.insert(kept_folder);
  const std::vector<std::string> figures = differing_figures(kept, again);
  if (figures.empty()) return;
  ++d.differing;
  for (const auto& f : figures) ++d.figures[f];
  for (const std::string& key : result_provenance_keys())
    if (provenance_text(kept.provenance, key) != provenance_text(again.provenance, key)) d.provenance.insert(key);
  if (!d.example.empty()) return;
  const std::string& f = figures.front();
  const auto value = [&](const RunRecord& r) {
    if (f == "status") return std::string(status_name(r.status));
    const auto it = r.metrics.find(f);
    return it == r.metrics.end() ? std::string("none") : fmt::format("{}", it->second);
  };
  d.example = fmt::format("run {}: {} {} in {}, {} here", kept.key.substr(0, 12), f, value(kept), kept_folder, value(again));
}

std::string duplicates_note(const Duplicates& d, const std::string& folder) {
  const std::vector<std::string> earlier(d.earlier.begin(), d.earlier.end());
  std::string note = fmt::format("{} run(s) of {} are also in {} (the same run keys): each counted once, from the folder given "
                                 "first (an ok run before a failed one)", d.runs, folder, join(earlier, ", "));
  if (d.differing == 0) return note + "; their figures are the same";
  std::vector<std::string> figures;
  for (const auto& [f, n] : d.figures) figures.push_back(fmt::format("{} in {}", f, n));
  note += fmt::format("; {} of them gave different results ({}; {}). ", d.differing, join(figures, ", "), d.example);
  note += d.provenance.empty() ? std::string("Their provenance does not say why")
                               : "Their provenance differs in " + join(std::vector<std::string>(d.provenance.begin(), d.provenance.end()), ", ");
  return note + ": give the folder whose results to keep first, or report the folders apart";
}

// Adds a folder's runs; a key found twice is one experiment: one of its runs counts (an ok
// run beats a failed attempt). `by_key` views the keys of in.runs, which never moves;
// `origin` is each kept run's folder.
void add_runs(ReportInput& in, std::unordered_map<std::string_view, std::size_t>& by_key, std::vector<std::string>& origin,
              ResultsScan& scan, const std::string& folder) {
  Duplicates duplicates;
  for (auto& r : scan.runs) {
    const auto known = by_key.find(r.key);
    if (known == by_key.end()) {
      in.runs.push_back(std::move(r));
      origin.push_back(folder);
      by_key.emplace(in.runs.back().key, in.runs.size() - 1);
      continue;
    }
    const std::size_t kept = known->second;
    tally_duplicate(duplicates, in.runs[kept], r, origin[kept]);
    if (in.runs[kept].status != RunStatus::Ok && r.status == RunStatus::Ok) {
      by_key.erase(known);  // it views the key about to be replaced
      in.runs[kept] = std::move(r);
      origin[kept] = folder;
      by_key.emplace(in.runs[kept].key, kept);
    }
  }
  if (duplicates.runs) in.notes.push_back(duplicates_note(duplicates, folder));
}

// A folder's manifest: its skipped combinations, and its sequential study or its claims,
// each once (the same study or claim from two folders, a sweep resumed elsewhere, counts once).
void add_manifest(ReportInput& in, const SweepManifest& manifest, const std::filesystem::path& dir) {
  for (const auto& s : manifest.skipped) in.skipped.push_back(s.what + ": " + s.reason);
  if (const auto& design = manifest.sequential) {
    const bool seen = std::any_of(in.studies.begin(), in.studies.end(), [&](const SequentialStudy& s) {
      return s.sweep == manifest.sweep && s.design == *design;
    });
    if (seen) return;
    SequentialStudy study{manifest.sweep, *design, manifest.budget_seconds, manifest.claims, 0, "", dir.string(), manifest.runs};
    const StudyLog log = read_study_log(dir);
    study.spent_seconds = log.spent_seconds();
    study.ended = log.ended;
    study.study_id = log.study_id;
    in.studies.push_back(std::move(study));
    return;
  }
  for (const auto& claim : manifest.claims) {
    bool seen = false;
    for (const auto& k : in.claims) seen = seen || k.to_json() == claim.to_json();
    if (!seen) in.claims.push_back(claim);
  }
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
  // Reserved once, so that the keys by_key views never move.
  in.runs.reserve(total);
  std::unordered_map<std::string_view, std::size_t> by_key;
  by_key.reserve(total);
  std::vector<std::string> origin;
  for (std::size_t d = 0; d < dirs.size(); ++d) {
    const std::string folder = dirs[d].string();
    in.notes.insert(in.notes.end(), notes[d].begin(), notes[d].end());
    if (auto note = mixed_sweeps_note(folder, scans[d])) in.notes.push_back(std::move(*note));
    const std::string strangers = strangers_note(folder, scans[d], manifests[d]);  // said after the duplicates
    add_runs(in, by_key, origin, scans[d], folder);
    if (!strangers.empty()) in.notes.push_back(strangers);
    for (auto& b : scans[d].bad) in.bad.push_back(std::move(b));
    if (manifests[d]) add_manifest(in, *manifests[d], dirs[d]);
  }
  return in;
}

}  // namespace lrb
