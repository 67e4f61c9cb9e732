#include "suite/sweep/run_selection.h"

#include <algorithm>
#include <set>

#include "suite/core/errors.h"

namespace lrb {

std::vector<std::size_t> selected_runs(const std::vector<RunSpec>& runs, const Shard& shard,
                                       const std::vector<std::string>& only, bool sequential) {
  std::vector<std::size_t> out;
  if (only.empty()) {
    for (std::size_t i = 0; i < runs.size(); ++i)
      if (in_shard(runs[i].key, shard)) out.push_back(i);
    return out;
  }
  if (sequential)
    throw UserError("--only runs named runs of a fixed design; a sequential study's waves decide which of its runs run");
  std::set<std::size_t> chosen;
  for (const std::string& name : only) {
    if (name.size() < 8 || name.size() > 64 || name.find_first_not_of("0123456789abcdef") != std::string::npos)
      throw UserError("--only " + name + ": give run keys (64 hex digits, or the first 8 or more), as `lrbench validate` lists them");
    std::size_t found = runs.size(), matches = 0;
    for (std::size_t i = 0; i < runs.size(); ++i)
      if (runs[i].key.compare(0, name.size(), name) == 0) {
        found = i;
        ++matches;
      }
    if (matches == 0) throw UserError("--only " + name + ": no run of the sweep has this key; `lrbench validate` lists them");
    if (matches > 1) throw UserError("--only " + name + ": " + std::to_string(matches) + " runs' keys start so; give more digits");
    if (in_shard(runs[found].key, shard)) chosen.insert(found);
  }
  return {chosen.begin(), chosen.end()};
}

}  // namespace lrb
