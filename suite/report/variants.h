#pragma once
// Evaluation variants in a report (suite/config/variant_spec.h): per task, for each model
// setting whose runs evaluated variants, one row per variant with
//   - the task's primary metric over seeds, and its paired difference from the same runs as
//     trained (same weights, same data: Δ per run, t interval over runs);
//   - inference peak memory (median over runs) and throughput (median and interquartile
//     range over every timed repeat of every run) at each batch size of [evaluate];
//   - at each probe point, the cosine similarity to the activations as trained, the mean
//     shift and the variance ratio (means over runs).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "suite/report/table.h"
#include "suite/stats/sample_stats.h"
#include "suite/store/run_record.h"

namespace lrb {

struct VariantRow {
  std::string name;
  nlohmann::json settings;
  std::vector<double> metric;            // one per ok run with a value
  std::vector<double> delta;             // variant − as trained, per run
  std::optional<stats::Interval> delta_ci;  // 95 % t interval of the mean Δ (n >= 2)
  struct Cost {
    std::int64_t batch = 0;
    std::optional<double> peak_bytes;    // median over runs
    std::vector<double> samples_per_s;   // every repeat of every run
  };
  std::vector<Cost> cost;
  struct Probe {
    std::string name;
    std::optional<double> cosine, mean_shift, var_ratio;  // means over runs
  };
  std::vector<Probe> probes;
};

struct VariantGroup {
  std::string task, metric, label;  // label: model and the options that tell groups apart
  std::size_t runs = 0;             // ok runs that evaluated the variants
  std::vector<VariantRow> rows;     // in declaration order
};

std::vector<VariantGroup> analyse_variants(const std::vector<RunRecord>& runs);
// The tables of one task's groups (none when the task has no variants).
std::vector<Table> variant_tables(const std::vector<VariantGroup>& groups, const std::string& task);
nlohmann::json variants_json(const std::vector<VariantGroup>& groups);

}  // namespace lrb
