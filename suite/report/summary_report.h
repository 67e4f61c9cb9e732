#pragma once
// The comparison table of `lrbench report`: per task, model x setting cells with
// mean ± std, the 95 % Student-t interval, n, and failed/stopped counts.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "suite/report/table.h"
#include "suite/store/results_folder.h"

namespace lrb {

struct ReportOptions {
  std::string metric;  // "" = each task's primary metric
};

// `skipped`: the sweep's skipped combinations (sweep.json), shown so none is silent.
Report build_summary_report(const ResultsScan& scan, const ReportOptions& options,
                            const nlohmann::json& skipped = nlohmann::json::array());

}  // namespace lrb
