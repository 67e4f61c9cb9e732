#pragma once
// Where a command may write what the user names (`report -o`, `export -o`, `attend --out`,
// `run --out`, ...): never over a results folder's own files, never through a symbolic
// link. Checked before anything is read or written; each refusal is a UserError (exit 2)
// naming the path and why.
#include <filesystem>
#include <string>
#include <vector>

namespace lrb {

// UserError when `path` (a file or a folder to be made) is, or is inside, an entry a results
// folder keeps (runs/, checkpoints/, sweep.h5, sweep.json, study.json, runs.index, locks,
// ...; results_layout.h) of any folder above it that holds results, or of one of
// `results_folders` (the folders the command reads, results folders whatever they hold
// yet). A file of the user's own beside those entries (DIR/report.md) is allowed.
void refuse_results_folder_output(const std::filesystem::path& path, const std::string& option,
                                  const std::vector<std::filesystem::path>& results_folders = {});

// The file an output option names, checked both ways: nothing or a regular file there, not
// a symbolic link (suite/core/files.h), and not a results folder's own file (above).
std::filesystem::path checked_output_file(const std::filesystem::path& path, const std::string& option,
                                          const std::vector<std::filesystem::path>& results_folders = {});

}  // namespace lrb
