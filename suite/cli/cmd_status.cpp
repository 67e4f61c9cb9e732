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
#include "suite/report/claims/study_progress.h"
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

// A sweep file of another sweep than the folder's would count every run missing: refused,
// as `lrbench run` refuses to write it there. A damaged manifest cannot tell: the file counts.
void refuse_other_sweep(const StatusArgs& a, const std::string& name) {
  std::optional<SweepManifest> here;
  try {
    here = read_sweep_manifest(a.dir);
  } catch (const UserError&) {
    return;
  }
  if (here && here->sweep != name)
    throw UserError("--spec " + a.spec + " is the sweep '" + name + "', but " + a.dir + " holds the results of the sweep '" +
                    here->sweep + "' (" + ResultsLayout(a.dir).manifest().string() + "): give that sweep's file with --spec, "
                    "or leave --spec out to count the runs its sweep.json lists");
}

// The sweep as `lrbench run` expands it: from the sweep file when given, else from the
// manifest that `lrbench run` wrote (DIR/sweep.json).
SweepManifest sweep_manifest(const StatusArgs& a) {
  if (!a.spec.empty()) {
    // lrbench-results (the launcher's program for `status DIR`) has no models to expand with.
    if (ModelRegistry::instance().names().empty())
      throw UserError("this program has no models built in, so it cannot read the sweep file " + a.spec +
                      ": run `lrbench status`, which starts lrbench-core for --spec");
    const SweepSpec spec = load_sweep_file(a.spec);
    refuse_other_sweep(a, spec.sweep.name);
    return make_sweep_manifest(spec, expand_sweep(spec));
  }
  std::optional<SweepManifest> manifest;
  try {
    manifest = read_sweep_manifest(a.dir);
  } catch (const UserError& e) {
    throw UserError(std::string(e.what()) + ", or give the sweep file with --spec");
  }
  if (!manifest) throw UserError(a.dir + " has no sweep.json (no sweep has started there): give the sweep file with --spec");
  return std::move(*manifest);
}

int status(const StatusArgs& a) {
  const Shard shard = a.shard.empty() ? Shard{} : parse_shard(a.shard);
  const SweepManifest manifest = sweep_manifest(a);
  std::vector<std::string> keys;
  std::string study;
  if (manifest.sequential) {
    // A sequential study: its runs so far and the current wave's; remaining = the wave's left.
    const StudyProgress p = study_progress(a.dir, manifest);
    for (const auto* list : {&p.finished_keys, &p.wave_keys})
      for (const auto& k : *list)
        if (in_shard(k, shard)) keys.push_back(k);
    const WavePlan& plan = p.judgement.plan;
    // No time spent here: the Slurm scripts read any change of this line as progress.
    study = fmt::format(" look={}/{} open={} state={}", std::min(plan.looks_done + 1, p.judgement.look_seeds.size()),
                        p.judgement.look_seeds.size(), plan.open.size(), study_state_word(plan.end));
  } else {
    for (const auto& k : manifest.runs)
      if (in_shard(k, shard)) keys.push_back(k);
  }
  const SweepStatus s = sweep_status(a.dir, keys);
  if (!s.note.empty()) fmt::print(stderr, "lrbench status: {}\n", s.note);
  fmt::print("{}{}\n", status_line(s), study);
  return kExitDone;
}

void add_status_command(CLI::App& app, CommandResult& result) {
  auto a = std::make_shared<StatusArgs>();
  auto* cmd = app.add_subcommand(
      "status", "how far a sweep has got: one line, total= finished= ok= failed= stopped= steps= missing= remaining= (a sequential study: its runs so far and the current wave's, then look= open= state=)");
  cmd->add_option("dir", a->dir, "results folder")->required();
  cmd->add_option("--spec", a->spec, "the sweep file (default: the run list of DIR/sweep.json)")->check(CLI::ExistingFile);
  cmd->add_option("--shard", a->shard, "count only shard I of N (I/N, as lrbench run --shard)");
  cmd->callback([a, &result] { result.exit_code = status(*a); });
}

LRB_REGISTER_COMMAND(add_status_command);

}  // namespace
}  // namespace lrb
