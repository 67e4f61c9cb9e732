#pragma once
// The JSON document of an Analysis, its keys written down (and fixed within a schema
// version) in results/REPORT_SCHEMA.md. CSV rows and HTML plots are made from it.
#include <string>

#include <nlohmann/json.hpp>

#include "suite/report/analysis.h"

namespace lrb {

inline constexpr int kReportSchemaVersion = 1;

// kind: "report" or "leaderboard".
nlohmann::json report_json(const Analysis& a, const std::string& kind);

}  // namespace lrb
