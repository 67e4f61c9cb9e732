#include "suite/report/efficiency.h"

#include "suite/report/text_format.h"

#include <fmt/format.h>

#include <cmath>

namespace lrb {

const std::vector<EfficiencyMetric>& efficiency_metrics() {
  static const std::vector<EfficiencyMetric> m = {
      {"params", "params", false, EfficiencyUnit::kCount, ""},
      {"flops_per_sample", "FLOPs/sample", false, EfficiencyUnit::kCount, ""},
      {"samples_per_s", "samples/s", true, EfficiencyUnit::kRate, ""},
      {"tokens_per_s", "tokens/s", true, EfficiencyUnit::kRate, ""},
      {"step_seconds_median", "step median", false, EfficiencyUnit::kSeconds, ""},
      {"step_seconds_p95", "step p95", false, EfficiencyUnit::kSeconds, ""},
      {"peak_bytes", "peak memory", false, EfficiencyUnit::kBytes, ""},
      // A step's own peak above what was live before it: activations and temporaries,
      // without the resident parameters, gradients and optimizer state.
      {"peak_step_bytes", "step memory", false, EfficiencyUnit::kBytes, ""},
      // Measured by the model around its attention calls (MAELRE), in measurement runs: the
      // peak above the live bytes at entry, over the timed steps.
      {"attention_peak_bytes", "attention memory", false, EfficiencyUnit::kBytes, ""},
      // On an accelerator: the CUDA caching allocator's peak (device = "cuda").
      {"device_peak_bytes", "device peak", false, EfficiencyUnit::kBytes, ""},
      {"max_batch_in_budget", "largest batch in budget", true, EfficiencyUnit::kPlain, ""},
      // Measured by MixFormer with check_form, in measurement runs: max|O_form - O_parallel| /
      // max|O_parallel| over its TALA calls (a correctness figure, not a cost, shown with them).
      {"form_gap", "form gap", false, EfficiencyUnit::kPlain, ""},
      // Data-parallel runs (ranks_per_run > 1): the gradient exchange's median time, and
      // its median share of a step's time.
      {"allreduce_seconds_median", "exchange median", false, EfficiencyUnit::kSeconds, ""},
      {"allreduce_share", "exchange share", false, EfficiencyUnit::kPlain, ""},
      {"memory_budget_bytes", "memory budget", false, EfficiencyUnit::kBytes, "max_batch_in_budget"},
  };
  return m;
}

bool is_efficiency_metric(const std::string& name) {
  for (const auto& m : efficiency_metrics())
    if (name == m.name) return true;
  return false;
}

std::string format_efficiency(const EfficiencyMetric& m, double v) {
  switch (m.unit) {
    case EfficiencyUnit::kCount: return format_count(v);
    case EfficiencyUnit::kBytes: return format_bytes(v);
    case EfficiencyUnit::kSeconds: return format_seconds(v);
    case EfficiencyUnit::kRate: return format_rate(v);
    case EfficiencyUnit::kPlain: break;
  }
  return std::floor(v) == v && std::fabs(v) < 1e15 ? fmt::format("{:.0f}", v) : format_value(v);
}

const std::vector<std::string>& scaling_metrics() {
  static const std::vector<std::string> m = {"peak_bytes", "peak_step_bytes", "attention_peak_bytes", "step_seconds_median"};
  return m;
}

}  // namespace lrb
