// lrbench compare BEFORE AFTER: the runs of two results folders (or sweep.h5 files) paired by
// run key, and whether each cell's figures moved (suite/report/compare.h).
#include <CLI/CLI.hpp>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "suite/cli/command.h"
#include "suite/cli/report_args.h"
#include "suite/core/errors.h"
#include "suite/core/exit_codes.h"
#include "suite/report/compare.h"
#include "suite/store/results_folder.h"

namespace lrb {
namespace {

namespace fs = std::filesystem;

struct Args {
  std::string before, after;
  std::vector<std::string> margins;
  double alpha = 0.05;
  std::string fail_on = "never";
  ReportArgs output;
};

// A results folder, or a sweep.h5 file on its own (`lrbench merge`'s, copied anywhere).
ReportInput read_side(const std::string& given) {
  std::error_code ec;
  if (fs::is_directory(given, ec)) return load_report_input({fs::path(given)});
  if (!fs::is_regular_file(given, ec))
    throw UserError(given + " is neither a results folder nor a sweep.h5 file; give the folder passed to `lrbench run --out`");
  ResultsScan scan = read_sweep_file(given);
  ReportInput in;
  in.runs = std::move(scan.runs);
  in.bad = std::move(scan.bad);
  in.sources = {given};
  return in;
}

int compare(const Args& a) {
  CompareOptions options;
  options.alpha = a.alpha;
  for (const std::string& m : a.margins) {
    auto [figure, margin] = parse_margin(m);
    options.margins.insert_or_assign(figure, margin);
  }
  const ReportOutput out = report_output(a.output, {fs::path(a.before), fs::path(a.after)});
  const ReportInput before = read_side(a.before), after = read_side(a.after);
  const Comparison c = compare_results(before, after, options);
  emit_report(comparison_report(c), out);
  return fails(a.fail_on, c) ? kExitRegressed : kExitDone;
}

void add_compare_command(CLI::App& app, CommandResult& result) {
  auto a = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("compare", "did anything move? the runs of two results folders paired by run key (the same "
                                            "sweep run by two builds or on two machines): per cell and figure identical, "
                                            "unchanged within its margin, improved, regressed or inconclusive");
  cmd->add_option("before", a->before, "results folder (or sweep.h5) of the baseline")->required();
  cmd->add_option("after", a->after, "results folder (or sweep.h5) of the candidate")->required();
  cmd->add_option("--margin", a->margins,
                  "FIGURE=VALUE: the change within which a figure counts as unchanged, absolute (accuracy=0.005) or relative "
                  "(step_seconds_median=5%); repeatable; defaults: a task's score (accuracy) 0.005, time figures 5 %, others 1 %");
  cmd->add_option("--alpha", a->alpha, "error rate of each verdict (default 0.05): improved/regressed adjusted over "
                                       "every figure, unchanged by two one-sided tests")
      ->check(CLI::Range(1e-6, 0.5));
  add_fail_on_option(cmd, a->fail_on);
  add_output_args(cmd, a->output);
  cmd->callback([a, &result] { result.exit_code = compare(*a); });
}

LRB_REGISTER_COMMAND(add_compare_command);

}  // namespace
}  // namespace lrb
