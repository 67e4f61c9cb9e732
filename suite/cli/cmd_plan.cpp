// lrbench plan DIR: what settling each open claim would cost, before it is paid — from a
// finished pilot (a fixed design: planned as the first look of a sequential design) or a
// sequential study in progress (planned with its own design).
#include <CLI/CLI.hpp>

#include <memory>

#include "suite/cli/command.h"
#include "suite/cli/report_args.h"
#include "suite/core/errors.h"
#include "suite/core/exit_codes.h"
#include "suite/core/keep_until_exit.h"
#include "suite/report/report_builder.h"

namespace lrb {
namespace {

struct Args {
  std::string dir;
  ReportArgs report;
  std::int64_t max = 60, step = 0;
};

void add_plan_command(CLI::App& app, CommandResult& result) {
  auto a = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("plan", "what settling each inconclusive claim would cost: the seeds a fixed design needs for "
                                         "80 % power, the seeds a sequential design is expected to spend, and both in run-hours "
                                         "and wall time from the measured run times");
  cmd->add_option("dir", a->dir, "results folder: a finished pilot or a sequential study in progress")->required()->check(CLI::ExistingDirectory);
  cmd->add_option("--max", a->max, "a pilot's assumed sequential design: seeds at most (default 60; a sequential study uses its own)")
      ->check(CLI::Range(2, 100000));
  cmd->add_option("--step", a->step, "a pilot's assumed sequential design: seeds per wave (default: the pilot's own count)")
      ->check(CLI::Range(1, 100000));
  add_report_args(cmd, a->report, false);
  cmd->callback([a, &result] {
    ReportOptions options = a->report.options();
    options.plan_max = a->max;
    options.plan_step = a->step;
    const ReportOutput out = report_output(a->report, {a->dir});
    const ReportInput& in = keep_until_exit(load_report_input({a->dir}));
    const Report& r = keep_until_exit(build_plan(in, options));
    emit_report(r, out);
    result.exit_code = kExitDone;
  });
}

LRB_REGISTER_COMMAND(add_plan_command);

}  // namespace
}  // namespace lrb
