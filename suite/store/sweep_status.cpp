#include "suite/store/sweep_status.h"

#include <cmath>

#include <fmt/core.h>

#include "suite/store/results_folder.h"
#include "suite/store/run_file.h"

namespace lrb {

SweepStatus sweep_status(const std::filesystem::path& dir, const std::vector<std::string>& run_keys) {
  SweepStatus s;
  s.total = static_cast<int>(run_keys.size());
  for (const auto& key : run_keys) {
    const auto file = ResultsLayout(dir).run_file(key);
    std::error_code ec;
    if (!std::filesystem::exists(file, ec)) {
      ++s.missing;
      continue;
    }
    const RunFileCheck check = read_run_file(file);
    if (!check.valid()) {
      ++s.missing;
      continue;
    }
    switch (check.record->status) {
      case RunStatus::Ok: ++s.ok; break;
      case RunStatus::Failed: ++s.failed; break;
      case RunStatus::Stopped: {
        ++s.stopped;
        const auto it = check.record->metrics.find("steps_done");
        if (it != check.record->metrics.end() && std::isfinite(it->second) && it->second > 0)
          s.stopped_steps += static_cast<std::int64_t>(it->second);
        break;
      }
    }
  }
  return s;
}

std::string status_line(const SweepStatus& s) {
  return fmt::format("total={} finished={} ok={} failed={} stopped={} steps={} missing={} remaining={}", s.total,
                     s.finished(), s.ok, s.failed, s.stopped, s.stopped_steps, s.missing, s.remaining());
}

}  // namespace lrb
