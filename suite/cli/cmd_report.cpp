// lrbench report DIR: the comparison tables of a results folder.
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <memory>

#include "suite/cli/command.h"
#include "suite/core/exit_codes.h"
#include "suite/core/files.h"
#include "suite/report/sinks.h"
#include "suite/report/summary_report.h"
#include "suite/store/results_folder.h"

namespace lrb {
namespace {

struct ReportArgs {
  std::string dir;
  std::string metric;
  std::string format = "term";
  std::string output;
};

int report(const ReportArgs& a) {
  const ResultsScan scan = load_results(a.dir);
  nlohmann::json skipped = nlohmann::json::array();
  const auto manifest = std::filesystem::path(a.dir) / "sweep.json";
  if (std::filesystem::exists(manifest)) skipped = nlohmann::json::parse(read_file(manifest)).value("skipped", skipped);
  const Report r = build_summary_report(scan, ReportOptions{a.metric}, skipped);
  if (a.output.empty()) {
    make_report_sink(a.format, a.format == "term" && ::isatty(1))->write(r, std::cout);
  } else {
    std::ostringstream ss;
    make_report_sink(a.format)->write(r, ss);
    write_file_atomic(a.output, ss.str());
  }
  return kExitDone;
}

void add_report_command(CLI::App& app, CommandResult& result) {
  auto a = std::make_shared<ReportArgs>();
  auto* cmd = app.add_subcommand("report", "comparison tables of a results folder (runs/ or sweep.h5)");
  cmd->add_option("dir", a->dir, "results folder")->required()->check(CLI::ExistingDirectory);
  cmd->add_option("--metric", a->metric, "metric to compare (default: each task's primary metric)");
  cmd->add_option("--format", a->format, "term, md or csv")->check(CLI::IsMember(report_formats()));
  cmd->add_option("-o,--output", a->output, "write to this file (atomically) instead of standard output");
  cmd->callback([a, &result] { result.exit_code = report(*a); });
}

LRB_REGISTER_COMMAND(add_report_command);

}  // namespace
}  // namespace lrb
