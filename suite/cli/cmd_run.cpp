// lrbench run SPEC --out DIR: run (or resume) a sweep, alone or under mpirun/srun.
#include <CLI/CLI.hpp>

#include <memory>

#include "suite/cli/command.h"
#include "suite/config/shard.h"
#include "suite/run/sweep_runner.h"

namespace lrb {
namespace {

void add_run_command(CLI::App& app, CommandResult& result) {
  auto opts = std::make_shared<SweepRunOptions>();
  auto* cmd = app.add_subcommand("run", "run a sweep (resumes where it stopped); under mpirun/srun the runs are shared among the ranks");
  cmd->add_option("spec", opts->spec_file, "the sweep file (TOML)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--out,-o", opts->out_dir, "results folder (runs/<run key>.h5 are written there)")->required();
  cmd->add_option("--threads", opts->threads, "intra-op threads per rank (0 = auto: cores on the node / ranks on the node); overrides [sweep] threads")
      ->check(CLI::Range(0, 1024));
  cmd->add_option("--data-cache", opts->data_cache, "task data cache folder, shared by the ranks of a machine; \"none\": no disk cache (default: $LRB_DATA_CACHE, else $XDG_CACHE_HOME/lrbench/data, else ~/.cache/lrbench/data)");
  cmd->add_flag("--retry-failed", opts->retry_failed, "run failed runs again (by default a failed run counts as finished)");
  auto shard = std::make_shared<std::string>();
  cmd->add_option("--shard", *shard,
                  "run only shard I of N (I/N, by run key): the N shards together hold every run once; "
                  "each task of a Slurm job array runs one");
  cmd->callback([opts, shard, &result] {
    if (!shard->empty()) opts->shard = parse_shard(*shard);
    result.exit_code = run_sweep(*opts);
  });
}

LRB_REGISTER_COMMAND(add_run_command);

}  // namespace
}  // namespace lrb
