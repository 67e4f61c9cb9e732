#pragma once
// `lrbench report` and `lrbench leaderboard`: an Analysis of the input, its tables, its JSON
// document and its warnings, as one Report every sink can write.
#include "suite/report/analysis.h"
#include "suite/report/report_input.h"
#include "suite/report/table.h"

namespace lrb {

// Per task: summary, spread, comparisons, efficiency, scaling (report_tables.h).
Report build_report(const ReportInput& input, const ReportOptions& options);
// Per task and setting: tie groups; across them: mean rank and normalised IQM. With
// ReportOptions::rank_by = "cost-to-target": the models by median cost to the target, and
// the performance profile (cost_to_target.h); UserError when no run has a target.
Report build_leaderboard(const ReportInput& input, const ReportOptions& options);
// `lrbench plan`: what settling each inconclusive claim would cost (study_plan.h), after the
// claims' verdicts and, for a sequential study, its looks.
Report build_plan(const ReportInput& input, const ReportOptions& options);

}  // namespace lrb
