// lrbench index DIR [--rebuild]: bring DIR/runs.index up to date (reading only the run
// files new or changed since it was written) and say what it did. `report`, `leaderboard`
// and `status` use the index by themselves; this command is for refreshing it ahead of
// them (at the end of a Slurm job), and --rebuild for reading and checking every run file
// again (the index trusts a file whose size, times and inode are unchanged).
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <memory>

#include "suite/cli/command.h"
#include "suite/core/errors.h"
#include "suite/core/exit_codes.h"
#include "suite/store/results_index.h"

namespace lrb {
namespace {

struct IndexArgs {
  std::string dir;
  bool rebuild = false;
};

int index(const IndexArgs& a) {
  const ResultsLayout layout(a.dir);
  std::error_code ec;
  if (!std::filesystem::is_directory(layout.runs(), ec))
    throw UserError("nothing to index: " + layout.runs().string() +
                    " does not exist; give the folder passed to `lrbench run --out`");
  IndexRefresh r;
  const ResultsScan scan = scan_runs_indexed(a.dir, r, IndexOptions{true, a.rebuild, false});
  for (const auto& b : scan.bad) fmt::print(stderr, "lrbench: bad run file {}: {}\n", b.file.string(), b.reason);
  if (!r.ignored.empty()) fmt::print(stderr, "lrbench: the old index was not used: {}\n", r.ignored);
  if (!r.write_problem.empty())
    throw EnvironmentError("cannot write " + layout.index().string() + ": " + r.write_problem);
  fmt::print("{}: {} run(s), {} bad file(s); {} file(s) read, {} entries reused, {} dropped{}\n", layout.index().string(),
             r.runs, r.bad, r.read, r.reused, r.dropped, r.written ? "" : " (already up to date)");
  return kExitDone;
}

void add_index_command(CLI::App& app, CommandResult& result) {
  auto a = std::make_shared<IndexArgs>();
  auto* cmd = app.add_subcommand("index", "bring a results folder's index (DIR/runs.index) up to date: only new or "
                                          "changed run files are read");
  cmd->add_option("dir", a->dir, "results folder")->required()->check(CLI::ExistingDirectory);
  cmd->add_flag("--rebuild", a->rebuild, "read and check every run file again instead of trusting unchanged ones");
  cmd->callback([a, &result] { result.exit_code = index(*a); });
}

LRB_REGISTER_COMMAND(add_index_command);

}  // namespace
}  // namespace lrb
