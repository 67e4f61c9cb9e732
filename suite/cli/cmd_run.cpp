// lrbench run SPEC --out DIR: run (or resume) a sweep, alone or under mpirun/srun.
#include <CLI/CLI.hpp>

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <memory>

#include "suite/cli/command.h"
#include "suite/config/shard.h"
#include "suite/core/errors.h"
#include "suite/core/files.h"
#include "suite/mpi/mpi_session.h"
#include "suite/mpi/mpirun_launch.h"
#include "suite/report/claims/sequential_claims.h"
#include "suite/store/output_paths.h"
#include "suite/sweep/rank_layout.h"
#include "suite/sweep/sweep_runner.h"

namespace lrb {
namespace {

struct LaunchArgs {
  std::string ranks_text;                  // --ranks N or auto
  int ranks = 0;                           // start this many ranks under mpirun (0: none)
  std::vector<std::string> mpirun_flags;   // --mpirun-flag: passed to mpirun as they are
  std::string shard;
};

// `mpirun [flags] -np N <this lrbench> run ...`, the same options without --ranks.
std::vector<std::string> mpirun_args(const SweepRunOptions& o, const LaunchArgs& l) {
  std::vector<std::string> a;
  if (::geteuid() == 0) a.push_back("--allow-run-as-root");
  a.insert(a.end(), l.mpirun_flags.begin(), l.mpirun_flags.end());
  // Its own layout is this machine's cores, counted as lrbench counts them: mpirun may count
  // fewer slots (a Slurm allocation, a container), and would bind each of two ranks to one
  // core whatever its threads. The user's own mapping and binding are kept.
  if (l.ranks_text == "auto") {
    const auto user_gave = [&](std::initializer_list<const char*> prefixes) {
      return std::any_of(l.mpirun_flags.begin(), l.mpirun_flags.end(), [&](const std::string& f) {
        return std::any_of(prefixes.begin(), prefixes.end(), [&](const char* p) { return f.rfind(p, 0) == 0; });
      });
    };
    if (!user_gave({"--oversubscribe", "--nooversubscribe", "--map-by"})) a.push_back("--oversubscribe");
    if (!user_gave({"--bind-to"})) a.insert(a.end(), {"--bind-to", "none"});
  }
  a.insert(a.end(), {"-np", std::to_string(l.ranks)});
  const char* launcher = std::getenv("LRB_EXECUTABLE");
  std::error_code ec;
  const std::string self = launcher ? std::string(launcher) : std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (self.empty()) throw EnvironmentError("cannot find the path of the lrbench binary (/proc/self/exe)");
  a.insert(a.end(), {self, "run", o.spec_file.string(), "--out", o.out_dir.string()});
  if (o.threads >= 0) a.insert(a.end(), {"--threads", std::to_string(o.threads)});
  if (!o.data_cache.empty()) a.insert(a.end(), {"--data-cache", o.data_cache});
  if (o.retry_failed) a.push_back("--retry-failed");
  if (!o.study_id.empty()) a.insert(a.end(), {"--study-id", o.study_id});
  if (!l.shard.empty()) a.insert(a.end(), {"--shard", l.shard});
  for (const std::string& key : o.only) a.insert(a.end(), {"--only", key});
  return a;
}

// --ranks N: 1 to 4096.
int parse_rank_count(const std::string& text) {
  int n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || n < 1 || n > 4096)
    throw UserError("--ranks " + text + ": give a number of ranks from 1 to 4096, or \"auto\"");
  return n;
}

void add_run_command(CLI::App& app, CommandResult& result) {
  auto opts = std::make_shared<SweepRunOptions>();
  auto launch = std::make_shared<LaunchArgs>();
  auto* cmd = app.add_subcommand("run", "run a sweep (resumes where it stopped); under mpirun/srun the runs are shared among the ranks");
  cmd->add_option("spec", opts->spec_file, "the sweep file (TOML)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--out,-o", opts->out_dir, "results folder (runs/<run key>.h5 are written there)")->required();
  cmd->add_option("--threads", opts->threads, "intra-op threads per rank (0 = auto: cores on the node / ranks on the node); overrides [sweep] threads")
      ->check(CLI::Range(0, 1024));
  cmd->add_option("--data-cache", opts->data_cache, "task data cache folder, shared by the ranks of a machine; \"none\": no disk cache (default: $LRB_DATA_CACHE, else $XDG_CACHE_HOME/lrbench/data, else ~/.cache/lrbench/data)");
  cmd->add_flag("--retry-failed", opts->retry_failed, "run failed runs again (by default a failed run counts as finished)");
  cmd->add_option("--study-id", opts->study_id,
                  "a new sequential study takes this identity (DIR/study.json) instead of a random one, and so replays the "
                  "seeds of the study of that name: a reproduction, not a new study");
  cmd->add_option("--shard", launch->shard,
                  "run only shard I of N (I/N, by run key): the N shards together hold every run once; "
                  "each task of a Slurm job array runs one");
  cmd->add_option("--only", opts->only,
                  "run only these runs (run keys as `lrbench validate` lists them, or their first 8 or more digits; "
                  "repeatable, or comma-separated) of a fixed design")
      ->delimiter(',');
  CLI::Option* ranks_option = cmd->add_option("--ranks", launch->ranks_text,
                  "start N ranks with mpirun and stay their parent: SIGTERM, SIGINT or SIGUSR1 to this process "
                  "checkpoints every rank and exits 3 (mpirun itself exits 1 on SIGTERM); \"auto\": one rank per core "
                  "(at most one per run left), threads sharing the rest (docs/sweep-file.md)");
  cmd->add_option("--mpirun-flag", launch->mpirun_flags, "with --ranks: one argument for mpirun (repeatable), e.g. --mpirun-flag=--oversubscribe");
  cmd->callback([opts, launch, ranks_option, &result] {
    refuse_filesystem_root(opts->out_dir, "--out");
    // Not inside another results folder's own entries (DIR/runs/x: its run files would be
    // read as damaged runs of DIR), nor a data cache there.
    refuse_results_folder_output(opts->out_dir, "--out");
    if (!opts->data_cache.empty() && opts->data_cache != "none")
      refuse_results_folder_output(opts->data_cache, "--data-cache", {opts->out_dir});
    if (!launch->shard.empty()) opts->shard = parse_shard(launch->shard);
    if (ranks_option->count() > 0) {
      if (launched_under_mpi()) throw UserError("--ranks starts mpirun itself; drop it when lrbench runs under mpirun or srun");
      if (launch->ranks_text == "auto") {
        const RankLayout layout = auto_rank_layout_for(*opts);
        launch->ranks = layout.ranks;
        opts->threads = layout.threads;  // the user's (--threads, the sweep's threads) where given
        fmt::print(stderr, "lrbench: --ranks auto: {}\n", layout.why);
      } else {
        launch->ranks = parse_rank_count(launch->ranks_text);
      }
      result.exit_code = run_under_mpirun(mpirun_args(*opts, *launch), launch->ranks);
      return;
    }
    if (!launch->mpirun_flags.empty()) throw UserError("--mpirun-flag goes with --ranks N");
    // A sequential study's looks are judged by the report's judge, at its default settings
    // (α = 0.05): the report replays the same looks from the same files.
    opts->make_judge = [](const SequentialSeeds& design, const std::vector<ClaimSpec>& claims) -> StudyJudge {
      return [design, claims](const std::vector<RunRecord>& runs, bool budget_spent) {
        return judge_sequential_study(design, claims, runs, budget_spent, ClaimSettings{}).plan;
      };
    };
    result.exit_code = run_sweep(*opts);
  });
}

LRB_REGISTER_COMMAND(add_run_command);

}  // namespace
}  // namespace lrb
