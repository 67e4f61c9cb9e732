// lrbench leaderboard DIR...: tie groups per task and setting, and the ranking across them,
// over one or many results folders (a run found in two folders counts once).
#include <CLI/CLI.hpp>

#include <filesystem>
#include <memory>

#include "suite/cli/command.h"
#include "suite/cli/report_args.h"
#include "suite/core/exit_codes.h"
#include "suite/core/keep_until_exit.h"
#include "suite/report/report_builder.h"

namespace lrb {
namespace {

struct Args {
  std::vector<std::string> dirs;
  ReportArgs report;
};

void add_leaderboard_command(CLI::App& app, CommandResult& result) {
  auto a = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("leaderboard", "leaderboard over one or more results folders: tie groups per task and "
                                                "setting, mean rank and normalised score across them");
  cmd->add_option("dirs", a->dirs, "results folders")->required()->check(CLI::ExistingDirectory);
  add_report_args(cmd, a->report, false);
  cmd->add_option("--by", a->report.by,
                  "rank by the metric (tie groups; default) or by cost-to-target: the median cost to reach the runs' target, "
                  "runs that never reached it counted as never, with a performance profile across tasks")
      ->check(CLI::IsMember({"metric", "cost-to-target"}));
  cmd->add_option("--cost", a->report.target_cost, "with --by cost-to-target: the cost counted, flops (default), seconds or steps")
      ->check(CLI::IsMember({"flops", "seconds", "steps"}));
  cmd->callback([a, &result] {
    std::vector<std::filesystem::path> dirs(a->dirs.begin(), a->dirs.end());
    const ReportOutput out = report_output(a->report, dirs);
    // Both freed by the exit, not one allocation at a time (keep_until_exit.h).
    const ReportInput& input = keep_until_exit(load_report_input(dirs));
    const Report& r = keep_until_exit(build_leaderboard(input, a->report.options()));
    emit_report(r, out);
    result.exit_code = kExitDone;
  });
}

LRB_REGISTER_COMMAND(add_leaderboard_command);

}  // namespace
}  // namespace lrb
