#include "suite/store/results_layout.h"

#include <system_error>
#include <utility>

#include "suite/core/files.h"

namespace lrb {

namespace fs = std::filesystem;

std::string ResultsLayout::own_entry(const std::string& name) {
  const ResultsLayout at("");
  const std::pair<fs::path, const char*> entries[] = {
      {at.runs(), "its run files"},
      {at.checkpoints(), "the checkpoints of its runs in progress"},
      {at.quarantine(), "its damaged files, set aside"},
      {at.slurm(), "its Slurm scripts and logs"},
      {at.manifest(), "its manifest"},
      {at.sweep_file_copy(), "the sweep file it was run from"},
      {at.merged(), "its merged runs; without runs/, the only copy"},
      {at.index(), "the index of its run files"},
      {at.study_log(), "the time its sequential study has spent"},
      {at.folder_lock(), "a lock of its writers"},
      {at.shard_layout(), "its shard layout"},
  };
  for (const auto& [path, what] : entries)
    if (path.filename() == name) return what;
  // .lock-layout, .lock-study, .lock-shard-I-of-N
  if (name.rfind(at.folder_lock().filename().string() + "-", 0) == 0) return "a lock of its writers";
  if (is_temp_name(name)) return "a temporary name, removed as stale by the next run";
  return "";
}

bool ResultsLayout::holds_results(const fs::path& dir) {
  const ResultsLayout at(dir);
  std::error_code ec;
  for (const fs::path& own : {at.manifest(), at.merged(), at.index(), at.study_log(), at.folder_lock(), at.shard_layout()})
    if (fs::exists(fs::symlink_status(own, ec))) return true;
  if (!fs::is_directory(at.runs(), ec)) return false;
  for (fs::directory_iterator it(at.runs(), ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".h5") return true;
  return false;
}

}  // namespace lrb
