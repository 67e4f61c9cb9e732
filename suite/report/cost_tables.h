#pragma once
// The tables of cost (report_tables.h renders the rest): per task, the accuracy–cost front
// (pareto.h) and the cost to the target (targets.h); for `leaderboard --by cost-to-target`
// the ranking per task and the performance profile across them (cost_to_target.h).
#include <optional>
#include <string>
#include <vector>

#include "suite/report/analysis.h"
#include "suite/report/table.h"

namespace lrb {

std::optional<Table> front_table(const Analysis& a, const std::string& task);
std::optional<Table> target_table(const Analysis& a, const std::string& task);
// Empty without Analysis::cost_to_target.
std::vector<Table> cost_to_target_tables(const Analysis& a);

}  // namespace lrb
