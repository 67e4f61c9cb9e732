#include "suite/store/output_paths.h"

#include <algorithm>
#include <system_error>

#include "suite/core/errors.h"
#include "suite/core/files.h"
#include "suite/store/results_layout.h"

namespace lrb {

namespace fs = std::filesystem;

namespace {

// The path as it is on disk: its folders with links followed and ".." resolved as the
// kernel would (a link to a results folder leads into it); its last name as given.
fs::path resolved(const fs::path& path) {
  std::error_code ec;
  const fs::path abs = fs::absolute(path, ec);
  if (ec) return path.lexically_normal();
  const fs::path name = abs.filename();
  const bool plain = !name.empty() && name != "." && name != "..";
  const fs::path real = fs::weakly_canonical(plain ? abs.parent_path() : abs, ec);
  if (ec) return abs.lexically_normal();
  return plain ? real / name : real;
}

}  // namespace

void refuse_results_folder_output(const fs::path& path, const std::string& option, const std::vector<fs::path>& results_folders) {
  const fs::path where = resolved(path);
  std::vector<fs::path> inputs;
  for (const fs::path& f : results_folders) inputs.push_back(resolved(f));
  const std::vector<fs::path> parts(where.begin(), where.end());
  fs::path folder;
  // Each folder above the path, with the entry of it the path is or goes into.
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    folder /= parts[i];
    const std::string entry = parts[i + 1].string();
    const std::string what = ResultsLayout::own_entry(entry);
    if (what.empty()) continue;
    const bool read_here = std::find(inputs.begin(), inputs.end(), folder) != inputs.end();
    if (!read_here && !ResultsLayout::holds_results(folder)) continue;
    const bool is_it = i + 2 == parts.size();
    throw UserError(option + " " + path.string() + (is_it ? " is " : " is inside ") + entry + " of the results folder " +
                    folder.string() + " (" + what + "); lrbench never writes over a results folder's own files: give "
                    "another path, one of your own beside them or elsewhere");
  }
}

fs::path checked_output_file(const fs::path& path, const std::string& option, const std::vector<fs::path>& results_folders) {
  refuse_unreplaceable_output(path, option);
  refuse_results_folder_output(path, option, results_folders);
  return path;
}

}  // namespace lrb
