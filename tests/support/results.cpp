#include "tests/support/results.h"

#include <cstring>
#include <set>
#include <thread>

#include "suite/store/run_file.h"

namespace lrb::test {

std::map<std::string, RunRecord> read_runs(const std::filesystem::path& dir) {
  std::map<std::string, RunRecord> out;
  if (!std::filesystem::exists(dir / "runs")) return out;
  for (const auto& e : std::filesystem::directory_iterator(dir / "runs")) {
    if (e.path().extension() != ".h5" || e.path().filename().string()[0] == '.') continue;
    auto check = read_run_file(e.path());
    if (check.valid()) out[check.record->key] = *check.record;
  }
  return out;
}

namespace {
bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }
bool is_timing(const std::string& name) {
  static const std::set<std::string> timing = {"step_seconds", "step_seconds_median", "step_seconds_p95",
                                               "samples_per_s", "tokens_per_s", "wall_seconds",
                                               "allreduce_seconds", "allreduce_seconds_median", "allreduce_share",
                                               "model_flops_per_s", "flop_utilisation",
                                               "step_data_seconds", "step_forward_seconds", "step_backward_seconds",
                                               "step_optimizer_seconds", "step_other_seconds",
                                               "step_data_seconds_median", "step_forward_seconds_median",
                                               "step_backward_seconds_median", "step_optimizer_seconds_median",
                                               "step_other_seconds_median", "target_seconds"};
  return timing.count(name) > 0;
}
}  // namespace

std::string deterministic_difference(const RunRecord& a, const RunRecord& b) {
  if (a.key != b.key) return "different run keys";
  if (a.status != b.status) return std::string("status ") + status_name(a.status) + " vs " + status_name(b.status);
  for (const auto& [name, v] : a.metrics) {
    if (is_timing(name) || name.find("bytes") != std::string::npos) continue;
    auto it = b.metrics.find(name);
    if (it == b.metrics.end()) return "metric " + name + " missing";
    if (!same_bits(v, it->second)) return "metric " + name + ": " + std::to_string(v) + " vs " + std::to_string(it->second);
  }
  for (const auto& [name, v] : a.curves) {
    if (is_timing(name) || name.find("bytes") != std::string::npos) continue;
    auto it = b.curves.find(name);
    if (it == b.curves.end()) return "curve " + name + " missing";
    if (v.size() != it->second.size()) return "curve " + name + " length";
    for (std::size_t i = 0; i < v.size(); ++i)
      if (!same_bits(v[i], it->second[i])) return "curve " + name + " at " + std::to_string(i);
  }
  return "";
}

bool wait_for_checkpoint(const std::filesystem::path& results_dir, std::chrono::seconds timeout) {
  const auto dir = results_dir / "checkpoints";
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::error_code ec;
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
      if (it->path().extension() == ".pt") return true;
  }
  return false;
}

}  // namespace lrb::test
