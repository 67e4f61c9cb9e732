#include "suite/report/report_builder.h"

#include "suite/core/text.h"
#include "suite/report/report_json.h"
#include "suite/report/report_tables.h"

namespace lrb {

Report build_report(const ReportInput& input, const ReportOptions& options) {
  const Analysis a = analyse(input, options);
  Report r;
  r.title = "lrbench report: " + join(input.sources, ", ");
  r.tables = report_tables(a);
  r.warnings = a.warnings;
  r.data = report_json(a, "report");
  return r;
}

Report build_leaderboard(const ReportInput& input, const ReportOptions& options) {
  const Analysis a = analyse(input, options);
  Report r;
  r.title = "lrbench leaderboard: " + join(input.sources, ", ");
  r.tables = leaderboard_tables(a);
  r.warnings = a.warnings;
  if (!a.overall.ranking && !a.units.empty()) {
    r.warnings.push_back("no ranking across tasks: " + a.overall.why_not);
    for (const auto& l : a.overall.left_out) r.warnings.push_back("not on every task: " + l);
  }
  r.data = report_json(a, "leaderboard");
  r.data["warnings"] = r.warnings;
  return r;
}

}  // namespace lrb
