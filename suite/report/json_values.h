#pragma once
// Statistics that may be undefined, as the JSON report writes them: null, never NaN
// (results/REPORT_SCHEMA.md); an interval as [lo, hi].
#include <optional>

#include <nlohmann/json.hpp>

#include "suite/stats/sample_stats.h"

namespace lrb::json_values {

inline nlohmann::json opt(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }
inline nlohmann::json opt(const std::optional<stats::Interval>& i) {
  return i ? nlohmann::json::array({i->lo, i->hi}) : nlohmann::json(nullptr);
}

}  // namespace lrb::json_values
