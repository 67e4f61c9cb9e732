// lrbench status DIR [--spec SPEC] [--shard I/N]: how far a sweep has got, in one line of
// key=value fields. Reads only; the Slurm job scripts use it to decide whether to requeue.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <memory>
#include <optional>

#include "suite/cli/command.h"
#include "suite/config/expand.h"
#include "suite/config/shard.h"
#include "suite/config/sweep_spec.h"
#include "suite/core/errors.h"
#include "suite/core/exit_codes.h"
#include "suite/core/files.h"
#include "suite/registry/registry.h"
#include "suite/store/results_folder.h"
#include "suite/store/sweep_manifest.h"
#include "suite/store/sweep_status.h"

namespace lrb {
namespace {

struct StatusArgs {
  std::string dir;
  std::string spec;
  std::string shard;
};

// The sweep's run keys: from the sweep file when given, else from the manifest that
// `lrbench run` wrote (DIR/sweep.json).
std::vector<std::string> sweep_keys(const StatusArgs& a) {
  std::vector<std::string> keys;
  if (!a.spec.empty()) {
    // lrbench-results (the launcher's program for `status DIR`) has no models to expand with.
    if (ModelRegistry::instance().names().empty())
      throw UserError("this program has no models built in, so it cannot read the sweep file " + a.spec +
                      ": run `lrbench status`, which starts lrbench-core for --spec");
    for (const auto& r : expand_sweep(load_sweep_file(a.spec)).runs) keys.push_back(r.key);
    return keys;
  }
  std::optional<SweepManifest> manifest;
  try {
    manifest = read_sweep_manifest(a.dir);
  } catch (const UserError& e) {
    throw UserError(std::string(e.what()) + ", or give the sweep file with --spec");
  }
  if (!manifest) throw UserError(a.dir + " has no sweep.json (no sweep has started there): give the sweep file with --spec");
  return manifest->runs;
}

int status(const StatusArgs& a) {
  const Shard shard = a.shard.empty() ? Shard{} : parse_shard(a.shard);
  std::vector<std::string> keys;
  for (auto& k : sweep_keys(a))
    if (in_shard(k, shard)) keys.push_back(std::move(k));
  fmt::print("{}\n", status_line(sweep_status(a.dir, keys)));
  return kExitDone;
}

void add_status_command(CLI::App& app, CommandResult& result) {
  auto a = std::make_shared<StatusArgs>();
  auto* cmd = app.add_subcommand(
      "status", "how far a sweep has got: one line, total= finished= ok= failed= stopped= steps= missing= remaining=");
  cmd->add_option("dir", a->dir, "results folder")->required();
  cmd->add_option("--spec", a->spec, "the sweep file (default: the run list of DIR/sweep.json)")->check(CLI::ExistingFile);
  cmd->add_option("--shard", a->shard, "count only shard I of N (I/N, as lrbench run --shard)");
  cmd->callback([a, &result] { result.exit_code = status(*a); });
}

LRB_REGISTER_COMMAND(add_status_command);

}  // namespace
}  // namespace lrb
