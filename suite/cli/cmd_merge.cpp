// lrbench merge DIR: fold DIR/runs/*.h5 into DIR/sweep.h5, naming every bad file.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <memory>

#include "suite/cli/command.h"
#include "suite/core/exit_codes.h"
#include "suite/store/results_folder.h"

namespace lrb {
namespace {

int merge(const std::string& dir) {
  // Each file read once: the merge itself names the files it left out.
  const MergeSummary merged = merge_results(dir);
  for (const auto& b : merged.bad) fmt::print(stderr, "lrbench: skipping {}: {}\n", b.file.string(), b.reason);
  fmt::print("{}: {} run(s), {} bad file(s) left out\n", ResultsLayout(dir).merged().string(), merged.runs, merged.bad.size());
  return kExitDone;
}

void add_merge_command(CLI::App& app, CommandResult& result) {
  auto dir = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("merge", "merge a results folder's run files into DIR/sweep.h5");
  cmd->add_option("dir", *dir, "results folder")->required()->check(CLI::ExistingDirectory);
  cmd->callback([dir, &result] { result.exit_code = merge(*dir); });
}

LRB_REGISTER_COMMAND(add_merge_command);

}  // namespace
}  // namespace lrb
