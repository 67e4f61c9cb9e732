// lrbench report DIR: the variance-aware comparison tables of a results folder.
#include <CLI/CLI.hpp>

#include <memory>

#include "suite/cli/command.h"
#include "suite/cli/report_args.h"
#include "suite/config/claim_spec.h"
#include "suite/core/exit_codes.h"
#include "suite/core/keep_until_exit.h"
#include "suite/report/report_builder.h"

namespace lrb {
namespace {

struct Args {
  std::string dir;
  ReportArgs report;
};

void add_report_command(CLI::App& app, CommandResult& result) {
  auto a = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("report", "comparison tables of a results folder (runs/ or sweep.h5): per cell over seeds, "
                                           "paired comparisons, tie groups, efficiency, scaling");
  cmd->add_option("dir", a->dir, "results folder")->required()->check(CLI::ExistingDirectory);
  add_report_args(cmd, a->report, true);
  cmd->add_flag("--breakdown", a->report.breakdown,
                "the efficiency table shows where the step goes: data, forward, backward, optimizer, exchange, other "
                "(medians; the JSON and CSV reports carry them always)");
  cmd->add_option("--cost", a->report.cost,
                  "the cost axis of each task's accuracy-cost front: flops (training FLOPs), peak_step_bytes, step_seconds "
                  "or params (default: flops where the runs record training FLOPs, else params)")
      ->check(CLI::IsMember(cost_figure_names()));
  cmd->callback([a, &result] {
    const ReportOutput out = report_output(a->report, {a->dir});
    // Both freed by the exit, not one allocation at a time (keep_until_exit.h).
    const ReportInput& in = keep_until_exit(load_report_input({a->dir}));
    const Report& r = keep_until_exit(build_report(in, a->report.options()));
    emit_report(r, out);
    result.exit_code = kExitDone;
  });
}

LRB_REGISTER_COMMAND(add_report_command);

}  // namespace
}  // namespace lrb
