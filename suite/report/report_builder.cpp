#include "suite/report/report_builder.h"

#include <memory>

#include "suite/core/text.h"
#include "suite/report/report_json.h"
#include "suite/report/claims/claim_tables.h"
#include "suite/report/report_tables.h"

namespace lrb {

Report build_report(const ReportInput& input, const ReportOptions& options) {
  const auto a = std::make_shared<const Analysis>(analyse(input, options));
  Report r;
  r.title = "lrbench report: " + join(input.sources, ", ");
  r.tables = report_tables(*a);
  r.warnings = a->warnings;
  r.make_data = [a] { return report_json(*a, "report"); };
  return r;
}

Report build_plan(const ReportInput& input, const ReportOptions& options) {
  const auto a = std::make_shared<const Analysis>(analyse(input, options));
  Report r;
  r.title = "lrbench plan: " + join(input.sources, ", ");
  for (auto& t : report_tables(*a))
    if (t.id == "claims" || t.id == "claims-looks") r.tables.push_back(std::move(t));
  if (auto p = claim_plan_table(*a)) r.tables.push_back(std::move(*p));
  r.warnings = a->warnings;
  if (a->claims.empty()) r.warnings.push_back("these results state no claims ([[claim]] in the sweep file): nothing to plan");
  else if (a->plans.empty()) r.warnings.push_back("no claim is inconclusive: nothing to plan");
  r.make_data = [a] { return report_json(*a, "plan"); };
  return r;
}

Report build_leaderboard(const ReportInput& input, const ReportOptions& options) {
  const auto a = std::make_shared<const Analysis>(analyse(input, options));
  Report r;
  r.title = std::string(a->cost_to_target ? "lrbench leaderboard by cost to the target: " : "lrbench leaderboard: ") +
            join(input.sources, ", ");
  r.tables = leaderboard_tables(*a);
  r.warnings = a->warnings;
  if (!a->overall.ranking && !a->units.empty() && !a->cost_to_target) {
    r.warnings.push_back("no ranking across tasks: " + a->overall.why_not);
    for (const auto& l : a->overall.left_out) r.warnings.push_back("not on every task: " + l);
  }
  r.make_data = [a, warnings = r.warnings] {
    nlohmann::json data = report_json(*a, "leaderboard");
    data["warnings"] = warnings;
    return data;
  };
  return r;
}

}  // namespace lrb
