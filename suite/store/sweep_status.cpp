#include "suite/store/sweep_status.h"

#include <limits>

#include <fmt/core.h>

#include "suite/store/results_index.h"

namespace lrb {

SweepStatus sweep_status(const std::filesystem::path& dir, const std::vector<std::string>& run_keys) {
  SweepStatus s;
  s.total = static_cast<int>(run_keys.size());
  for (const IndexedStatus& run : run_statuses(dir, run_keys, &s.note)) {
    if (run.kind != IndexedStatus::Kind::Run) {
      ++s.missing;  // not there, or damaged: never data
      continue;
    }
    switch (run.status) {
      case RunStatus::Ok: ++s.ok; break;
      case RunStatus::Failed: ++s.failed; break;
      case RunStatus::Stopped:
        ++s.stopped;
        // Saturating: a damaged or hand-made steps_done (each at most 2^53) cannot overflow the sum.
        s.stopped_steps = run.steps_done > std::numeric_limits<std::int64_t>::max() - s.stopped_steps
                              ? std::numeric_limits<std::int64_t>::max()
                              : s.stopped_steps + run.steps_done;
        break;
    }
  }
  return s;
}

std::string status_line(const SweepStatus& s) {
  return fmt::format("total={} finished={} ok={} failed={} stopped={} steps={} missing={} remaining={}", s.total,
                     s.finished(), s.ok, s.failed, s.stopped, s.stopped_steps, s.missing, s.remaining());
}

}  // namespace lrb
