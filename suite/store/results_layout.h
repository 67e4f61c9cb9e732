#pragma once
// Where everything lives in a results folder DIR (the --out of `lrbench run`). Every path
// into DIR is spelled here and nowhere else:
//   DIR/runs/<run key>.h5          one file per finished run (run_file.h)
//   DIR/checkpoints/<run key>.pt   the state of a run that was stopped or checkpoints
//   DIR/quarantine/                damaged files moved aside, each with a .reason file
//   DIR/sweep.json, DIR/sweep.toml the sweep's manifest (its run keys, skipped combinations,
//                                  claims) and the sweep file it was expanded from
//   DIR/sweep.h5                   everything merged by `lrbench merge`
//   DIR/study.json, DIR/.lock-study a sequential study's sessions and time spent (study_log.h)
//   DIR/runs.index                 what reports read of each run file (results_index.h)
//   DIR/slurm/                     `lrbench slurm`'s scripts, sweep copies and job logs
//   DIR/.lock, .lock-layout, .lock-shard-I-of-N, .shard-layout
//                                  who writes the folder now (sweep_runner.cpp)
// Rules and formats: results/SCHEMA.md.
#include <filesystem>
#include <string>
#include <vector>

namespace lrb {

class ResultsLayout {
 public:
  explicit ResultsLayout(std::filesystem::path dir) : dir_(std::move(dir)) {}

  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path runs() const { return dir_ / kRuns; }
  std::filesystem::path run_file(const std::string& key) const { return runs() / (key + ".h5"); }
  std::filesystem::path checkpoints() const { return dir_ / "checkpoints"; }
  std::filesystem::path checkpoint(const std::string& key) const { return checkpoints() / (key + ".pt"); }
  std::filesystem::path quarantine() const { return dir_ / "quarantine"; }
  std::filesystem::path manifest() const { return dir_ / "sweep.json"; }
  std::filesystem::path sweep_file_copy() const { return dir_ / "sweep.toml"; }
  std::filesystem::path merged() const { return dir_ / "sweep.h5"; }
  std::filesystem::path index() const { return dir_ / "runs.index"; }
  std::filesystem::path study_log() const { return dir_ / "study.json"; }
  std::filesystem::path study_lock() const { return dir_ / ".lock-study"; }
  std::filesystem::path slurm() const { return dir_ / "slurm"; }
  std::filesystem::path folder_lock() const { return dir_ / ".lock"; }
  std::filesystem::path shard_layout_lock() const { return dir_ / ".lock-layout"; }
  std::filesystem::path shard_layout() const { return dir_ / ".shard-layout"; }
  std::filesystem::path shard_lock(int index, int count) const {
    return dir_ / (".lock-shard-" + std::to_string(index) + "-of-" + std::to_string(count));
  }
  // The folders a killed process may leave temporary files in (besides DIR itself).
  std::vector<std::filesystem::path> folders_with_temporaries() const { return {runs(), checkpoints(), quarantine()}; }

  // Whether `file` sits in a runs/ folder, where a run file's name is its run key.
  static bool in_runs_folder(const std::filesystem::path& file) { return file.parent_path().filename() == kRuns; }

  // What a results folder keeps at `name`, one entry directly inside it ("its run files"
  // for runs), or "" when it keeps nothing there: no output of the user's may take such a
  // name (suite/store/output_paths.h).
  static std::string own_entry(const std::string& name);
  // Whether `dir` holds what only a results folder holds: a manifest, a merged file, an
  // index, a study log, a lock or shard layout, or a runs/ folder holding a run file.
  static bool holds_results(const std::filesystem::path& dir);

 private:
  static constexpr const char* kRuns = "runs";
  std::filesystem::path dir_;
};

}  // namespace lrb
