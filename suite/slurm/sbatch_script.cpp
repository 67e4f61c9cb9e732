#include "suite/slurm/sbatch_script.h"

#include <fmt/core.h>

#include <map>
#include <vector>

#include "suite/core/errors.h"
#include "suite/slurm/sbatch_templates.h"

namespace lrb {

namespace {

// Replaces every @KEY@ of the template; a placeholder left over is a bug in lrbench.
std::string fill(std::string text, const std::map<std::string, std::string>& values) {
  for (const auto& [key, value] : values) {
    const std::string marker = "@" + key + "@";
    for (auto pos = text.find(marker); pos != std::string::npos; pos = text.find(marker, pos + value.size()))
      text.replace(pos, marker.size(), value);
  }
  for (auto pos = text.find('@'); pos != std::string::npos; pos = text.find('@', pos + 1)) {
    const auto end = text.find('@', pos + 1);
    if (end == std::string::npos) break;
    const std::string inner = text.substr(pos + 1, end - pos - 1);
    const bool placeholder = !inner.empty() && inner.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ_") == std::string::npos;
    LRB_CHECK(!placeholder, "sbatch template placeholder @" + inner + "@ has no value");
  }
  return text;
}

std::string directive(const std::string& option) { return "#SBATCH " + option + "\n"; }

// The lines every job of the sweep shares: where it runs, what it may use.
std::string common_directives(const SbatchJob& job) {
  std::string d;
  if (!job.partition.empty()) d += directive("--partition=" + job.partition);
  if (!job.account.empty()) d += directive("--account=" + job.account);
  if (job.time_seconds) d += directive("--time=" + format_time_limit(*job.time_seconds));
  d += directive("--chdir=" + job.out.string());
  d += directive("--open-mode=append");
  return d;
}

int total_tasks(const SbatchJob& job) { return job.nodes * job.ntasks_per_node; }

}  // namespace

void check_sbatch_job(const SbatchJob& job) {
  if (!is_slurm_name(job.name))
    throw UserError("the sweep's name '" + job.name + "' cannot be a Slurm job name: use letters, digits, '.', '_' and '-' (at most 64)");
  check_script_path("the lrbench binary", job.lrbench);
  check_script_path("the sweep file", job.spec);
  check_script_path("the results folder", job.out);
  check_script_path("the script", job.script);
  if (job.array) check_script_path("the array script", job.array_script);
  LRB_CHECK(job.nodes >= 1 && job.ntasks_per_node >= 1 && job.cpus_per_task >= 1 && job.gpus_per_task >= 0,
            "sbatch job counts were not validated");
  LRB_CHECK(job.runs_per_gpu == 1 || (job.gpus_per_task == 0 && job.gpus_per_node >= 1 &&
                                      job.ntasks_per_node <= job.runs_per_gpu * job.gpus_per_node),
            "a job sharing GPUs asks for them per node, with at most runs_per_gpu tasks a GPU");
  if (static_cast<std::int64_t>(job.nodes) * job.ntasks_per_node > 1000000)
    throw UserError("--nodes x --ntasks-per-node is more than a million tasks");
  if (!job.partition.empty()) check_slurm_name("--partition", job.partition);
  if (!job.account.empty()) check_slurm_name("--account", job.account);
  check_signal_lead(job.signal_lead_seconds, job.time_seconds);
  LRB_CHECK(job.max_no_progress >= 1 && job.max_no_progress <= 1000, "max_no_progress out of range");
}

std::string render_sweep_script(const SbatchJob& job) {
  check_sbatch_job(job);
  const bool array = job.array.has_value();
  std::string d;
  d += directive("--job-name=lrb-" + job.name);
  d += directive("--nodes=" + std::to_string(job.nodes));
  d += directive("--ntasks-per-node=" + std::to_string(job.ntasks_per_node));
  // --gpus-per-task needs an explicit task count.
  d += directive("--ntasks=" + std::to_string(total_tasks(job)));
  d += directive("--cpus-per-task=" + std::to_string(job.cpus_per_task));
  if (job.gpus_per_task > 0) d += directive("--gpus-per-task=" + std::to_string(job.gpus_per_task));
  // Shared GPUs: the node's GPUs for all its tasks (no per-task binding); see docs/clusters.md.
  if (job.runs_per_gpu > 1) d += directive("--gres=gpu:" + std::to_string(job.gpus_per_node));
  if (array) d += directive("--array=" + job.array->text());
  d += common_directives(job);
  d += directive("--signal=B:USR1@" + std::to_string(job.signal_lead_seconds));
  d += directive("--requeue");
  d += directive("--output=" + (job.script.parent_path() / (job.name + (array ? "-%A_%a.log" : "-%j.log"))).string());
  d.pop_back();

  // srun does not take --cpus-per-task from the allocation since Slurm 22.05: say it again.
  // --gpus-per-task binds each task to its own GPUs (--gpu-bind=per_task), so each rank
  // sees its GPU as device 0 and lrbench's local rank -> device mapping picks it.
  std::string srun = "--cpus-per-task=" + std::to_string(job.cpus_per_task);
  if (job.gpus_per_task > 0) srun += " --gpus-per-task=" + std::to_string(job.gpus_per_task);
  if (job.runs_per_gpu > 1) srun += " --gres=gpu:" + std::to_string(job.gpus_per_node);

  std::string shard = "SHARD_ARGS=()";
  if (array) {
    shard = fmt::format(
        "# Array task I runs shard I-{0} of {1}, chosen by run key: together the tasks run every run once.\n"
        "[[ \"${{SLURM_ARRAY_TASK_ID:-}}\" =~ ^[0-9]+$ ]] || {{ echo \"lrbench-slurm: $SCRIPT is a job array: submit it with sbatch\" >&2; exit 2; }}\n"
        "SHARD_ARGS=(--shard \"$((SLURM_ARRAY_TASK_ID - {0}))/{1}\")",
        job.array->first, job.array->count());
  }
  return fill(kSweepSbatchTemplate,
              {{"NAME", job.name},
               {"MODE", array ? "job array " + job.array->text() + ", one shard per task" : "one MPI job"},
               {"SCRIPT", job.script.string()},
               {"DIRECTIVES", d},
               {"LRBENCH", job.lrbench.string()},
               {"SPEC", job.spec.string()},
               {"OUT", job.out.string()},
               {"MAX_NO_PROGRESS", std::to_string(job.max_no_progress)},
               {"SHARD_SETUP", shard},
               {"SRUN_OPTIONS", srun}});
}

std::string render_final_script(const SbatchJob& job) {
  check_sbatch_job(job);
  LRB_CHECK(job.array.has_value(), "the final job belongs to array mode");
  std::string d;
  d += directive("--job-name=lrb-" + job.name + "-final");
  d += directive("--nodes=1");
  d += directive("--ntasks=1");
  d += directive("--cpus-per-task=1");
  d += common_directives(job);
  d += directive("--output=" + (job.script.parent_path() / (job.name + "-final-%j.log")).string());
  d.pop_back();
  return fill(kFinalSbatchTemplate, {{"NAME", job.name},
                                     {"SCRIPT", job.script.string()},
                                     {"DIRECTIVES", d},
                                     {"LRBENCH", job.lrbench.string()},
                                     {"SPEC", job.spec.string()},
                                     {"OUT", job.out.string()},
                                     {"ARRAY_SCRIPT", job.array_script.string()},
                                     {"SEQUENTIAL", job.sequential ? "1" : "0"}});
}

}  // namespace lrb
