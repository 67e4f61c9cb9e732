#include "suite/report/efficiency.h"

#include "suite/contracts/figures.h"
#include "suite/core/errors.h"
#include "suite/report/text_format.h"

#include <fmt/format.h>

#include <cmath>

namespace lrb {

namespace {

// A figure shown beside the task metric: its direction and unit are the catalogue's.
EfficiencyMetric shown(const char* name, const char* header, const char* only_with = "", bool breakdown = false) {
  const FigureDef* f = find_figure(name);
  // A model's figure is declared in its folder's figures.cpp: every program that reports
  // links those declarations (lrb_plugin_figures, CMakeLists.txt), as lrbench-results does.
  LRB_CHECK(f != nullptr, std::string("every efficiency figure a report shows is in the figure catalogue: ") + name +
                              " is not (does this program link lrb_plugin_figures?)");
  EfficiencyUnit unit = EfficiencyUnit::kPlain;
  switch (f->unit) {
    case FigureUnit::Count: unit = EfficiencyUnit::kCount; break;
    case FigureUnit::Bytes: unit = EfficiencyUnit::kBytes; break;
    case FigureUnit::Seconds: unit = EfficiencyUnit::kSeconds; break;
    case FigureUnit::Rate: unit = EfficiencyUnit::kRate; break;
    case FigureUnit::Share: unit = EfficiencyUnit::kShare; break;
    case FigureUnit::Plain: break;
  }
  return {name, header, f->direction != Direction::Lower, f->direction != Direction::None, unit, only_with, breakdown};
}

}  // namespace

// Which figures a report shows, in which order, under which header.
const std::vector<EfficiencyMetric>& efficiency_metrics() {
  static const std::vector<EfficiencyMetric> m = {
      shown("params", "params"),
      shown("flops_per_sample", "FLOPs/sample"),
      // What training spent: 3 x FLOPs/sample x batch x steps (model FLOPs, not padded work).
      shown("train_flops", "train FLOPs"),
      shown("samples_per_s", "samples/s"),
      shown("tokens_per_s", "tokens/s"),
      // The model's FLOPs per training step over its step time, and that over the rank's
      // measured matrix-product peak (model FLOP utilisation).
      shown("model_flops_per_s", "FLOP/s"),
      shown("flop_utilisation", "util"),
      shown("step_seconds_median", "step median"),
      shown("step_seconds_p95", "step p95"),
      // Where the step goes (suite/run/step_phases.h), with `report --breakdown`; a
      // data-parallel step's exchange is the "exchange median" below.
      shown("step_data_seconds_median", "data", "", true),
      shown("step_forward_seconds_median", "forward", "", true),
      shown("step_backward_seconds_median", "backward", "", true),
      shown("step_optimizer_seconds_median", "optimizer", "", true),
      shown("step_other_seconds_median", "other", "", true),
      shown("peak_bytes", "peak memory"),
      // A step's own peak above what was live before it: activations and temporaries,
      // without the resident parameters, gradients and optimizer state.
      shown("peak_step_bytes", "step memory"),
      // Measured by the model around its attention calls (MAELRE), in measurement runs: the
      // peak above the live bytes at entry, over the timed steps.
      shown("attention_peak_bytes", "attention memory"),
      // On an accelerator: the CUDA caching allocator's peak (device = "cuda").
      shown("device_peak_bytes", "device peak"),
      shown("max_batch_in_budget", "largest batch in budget"),
      // Measured by MixFormer with check_form, in measurement runs: max|O_form - O_parallel| /
      // max|O_parallel| over its TALA calls (a correctness figure, not a cost, shown with them).
      shown("form_gap", "form gap"),
      // Data-parallel runs (ranks_per_run > 1): the gradient exchange's median time, and
      // its median share of a step's time.
      shown("allreduce_seconds_median", "exchange median"),
      shown("allreduce_share", "exchange share"),
      shown("memory_budget_bytes", "memory budget", "max_batch_in_budget"),
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
    case EfficiencyUnit::kShare: return std::isfinite(v) ? fmt::format("{:.3g} %", 100 * v) : format_value(v);
    case EfficiencyUnit::kPlain: break;
  }
  return std::floor(v) == v && std::fabs(v) < 1e15 ? fmt::format("{:.0f}", v) : format_value(v);
}

const std::vector<std::string>& scaling_metrics() {
  static const std::vector<std::string> m = {"peak_bytes", "peak_step_bytes", "attention_peak_bytes", "step_seconds_median"};
  return m;
}

}  // namespace lrb
