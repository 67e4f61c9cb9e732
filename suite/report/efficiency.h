#pragma once
// The efficiency figures a report shows beside the task metric, when runs recorded them:
// cost (parameters, FLOPs), speed (throughput, step latency), memory (peak), and the largest
// batch that fits a memory budget (`max_batch_in_budget`, recorded by the measurement mode).
#include <string>
#include <vector>

namespace lrb {

enum class EfficiencyUnit { kCount, kBytes, kSeconds, kRate, kShare, kPlain };

struct EfficiencyMetric {
  const char* name;        // stored metric name
  const char* header;      // column header
  bool higher_is_better;    // from the figure catalogue (suite/contracts/figures.h)
  bool directed;            // the catalogue gives it a better side (a memory budget has none)
  EfficiencyUnit unit;      // the same
  const char* only_with;   // shown only when this metric is present too ("" = always when present)
  bool breakdown = false;   // a phase of the step: in the text and HTML tables only with `report --breakdown`
};

const std::vector<EfficiencyMetric>& efficiency_metrics();
bool is_efficiency_metric(const std::string& name);
std::string format_efficiency(const EfficiencyMetric& m, double v);

// The scaling fits of a report: these against task.seq_len on log-log axes.
const std::vector<std::string>& scaling_metrics();

}  // namespace lrb
