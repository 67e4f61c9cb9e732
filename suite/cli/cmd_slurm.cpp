// lrbench slurm SPEC: write the sbatch script(s) of a sweep into its results folder, and
// with --submit hand them to sbatch. MPI mode: one job, `srun --mpi=pmix lrbench run`.
// Array mode (--array): one shard of the sweep per array task, and a final job, after the
// array, that merges and reports. Both checkpoint on Slurm's warning and requeue themselves.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "suite/cli/command.h"
#include "suite/config/expand.h"
#include "suite/config/sweep_spec.h"
#include "suite/core/environment.h"
#include "suite/core/errors.h"
#include "suite/core/exit_codes.h"
#include "suite/core/files.h"
#include "suite/core/run_program.h"
#include "suite/core/sha256.h"
#include "suite/slurm/sbatch_script.h"
#include "suite/store/output_paths.h"
#include "suite/store/results_layout.h"
#include "suite/store/study_log.h"

namespace lrb {
namespace {

namespace fs = std::filesystem;

// As given on the command line; parse_* and check_* turn them into an SbatchJob.
struct SlurmArgs {
  std::string spec, out;
  std::string nodes = "1", ntasks_per_node, gpus_per_task = "0", cpus_per_task;  // ntasks_per_node "": the default
  std::string runs_per_gpu = "1", gpus_per_node = "1";
  std::string time, partition, account, array, signal_lead = "120";
  std::string study_id;  // a sequential study's identity (`run --study-id`)
  bool submit = false;
};

// The job id sbatch --parsable printed ("123" or "123;cluster").
std::string parse_job_id(const ProgramResult& r, const fs::path& script) {
  if (r.exit_code != 0)
    throw UserError("sbatch refused " + script.string() + " (exit code " + std::to_string(r.exit_code) + "): " + r.err +
                    r.out);
  std::string id = r.out.substr(0, r.out.find_first_of(";\n"));
  if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos)
    throw UserError("sbatch printed '" + r.out + "' for " + script.string() + ", not a job id");
  return id;
}

std::string submit(const std::vector<std::string>& options, const fs::path& script) {
  if (find_on_path("sbatch").empty())
    throw UserError("sbatch is not on PATH: install Slurm's client (scripts/setup.sh installs slurm-wlm), or leave out "
                    "--submit and submit " + script.string() + " where Slurm is");
  std::vector<std::string> argv = {"sbatch", "--parsable"};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.push_back(script.string());
  return parse_job_id(run_program(argv), script);
}

// The results folder as an absolute path without symlinks, checked (before anything is
// created) to be safe in the script, then created.
fs::path results_folder(const std::string& given, const std::string& sweep_name) {
  if (!given.empty()) refuse_filesystem_root(given, "--out");
  fs::path p = fs::absolute(given.empty() ? fs::path("results") / sweep_name : fs::path(given)).lexically_normal();
  if (!p.has_filename()) p = p.parent_path();
  refuse_results_folder_output(p, "--out");  // not inside another results folder's runs/, slurm/, ...
  check_script_path("the results folder", p);
  std::error_code ec;
  const fs::path slurm_dir = ResultsLayout(p).slurm();
  fs::create_directories(slurm_dir, ec);
  if (ec) throw UserError("cannot create " + slurm_dir.string() + ": " + ec.message() + "; give another --out");
  p = fs::canonical(p, ec);
  if (ec) throw UserError("cannot resolve the results folder " + p.string() + ": " + ec.message());
  check_script_path("the results folder", p);
  return p;
}

// --runs-per-gpu k: k tasks a GPU on --gpus-per-node G GPUs (by default k × G tasks a node),
// which the sweep's runs_per_gpu must allow (its start-up check refuses more).
void gpu_sharing(SbatchJob& job, const SlurmArgs& a, const SweepSpec& spec) {
  job.runs_per_gpu = parse_slurm_count("--runs-per-gpu", a.runs_per_gpu, 1, kMaxRunsPerGpu);
  if (job.runs_per_gpu == 1) return;
  if (spec.sweep.device != "cuda")
    throw UserError(spec.file + ": --runs-per-gpu shares GPUs, and the sweep runs on device = \"" + spec.sweep.device + "\"");
  if (spec.sweep.runs_per_gpu < job.runs_per_gpu)
    throw UserError(fmt::format("{}: --runs-per-gpu {} but the sweep's runs_per_gpu is {}: its start-up check would refuse "
                                "the job; set [sweep] runs_per_gpu = {}",
                                spec.file, job.runs_per_gpu, spec.sweep.runs_per_gpu, job.runs_per_gpu));
  if (job.gpus_per_task > 0)
    throw UserError("--runs-per-gpu asks for the node's GPUs (--gpus-per-node) shared by its tasks; leave out --gpus-per-task");
  job.gpus_per_node = parse_slurm_count("--gpus-per-node", a.gpus_per_node, 1, 64);
  const int most = job.runs_per_gpu * job.gpus_per_node;
  if (a.ntasks_per_node.empty()) job.ntasks_per_node = most;
  if (job.ntasks_per_node > most)
    throw UserError(fmt::format("--ntasks-per-node {} is more than --runs-per-gpu {} x --gpus-per-node {}: give at most {}",
                                job.ntasks_per_node, job.runs_per_gpu, job.gpus_per_node, most));
}

// The job's resources from the command line, checked against the sweep (a count that does
// not fill whole data-parallel groups, a GPU sweep without GPUs).
SbatchJob job_resources(const SlurmArgs& a, const SweepSpec& spec) {
  SbatchJob job;
  job.name = spec.sweep.name;
  job.nodes = parse_slurm_count("--nodes", a.nodes, 1, 100000);
  // Data parallelism: by default one run's group of ranks per node (its ranks exchange
  // gradients every step, fastest within a node); a count given must fill whole groups.
  const int ranks_per_run = spec.sweep.ranks_per_run;
  job.ntasks_per_node = a.ntasks_per_node.empty() ? ranks_per_run
                                                  : parse_slurm_count("--ntasks-per-node", a.ntasks_per_node, 1, 4096);
  if (static_cast<std::int64_t>(job.nodes) * job.ntasks_per_node % ranks_per_run != 0)
    throw UserError(fmt::format("{}: ranks_per_run = {} but --nodes {} x --ntasks-per-node {} gives {} task(s), not a "
                                "multiple of {}: give --ntasks-per-node {} (one run per node), or a count that fills whole groups",
                                spec.sweep.ranks_per_run_at.str(), ranks_per_run, job.nodes, job.ntasks_per_node,
                                static_cast<std::int64_t>(job.nodes) * job.ntasks_per_node, ranks_per_run, ranks_per_run));
  job.gpus_per_task = parse_slurm_count("--gpus-per-task", a.gpus_per_task, 0, 64);
  // By default a task gets the cores its ranks' threads use.
  job.cpus_per_task = a.cpus_per_task.empty() ? std::max(1, spec.sweep.threads)
                                              : parse_slurm_count("--cpus-per-task", a.cpus_per_task, 1, 4096);
  if (!a.time.empty()) job.time_seconds = parse_time_limit(a.time);
  if (!a.partition.empty()) check_slurm_name("--partition", a.partition);
  if (!a.account.empty()) check_slurm_name("--account", a.account);
  job.sequential = spec.sweep.sequential.has_value();
  job.partition = a.partition;
  job.account = a.account;
  if (!a.array.empty()) job.array = parse_array(a.array);
  job.signal_lead_seconds = parse_slurm_count("--signal-lead", a.signal_lead, 1, 65535);
  check_signal_lead(job.signal_lead_seconds, job.time_seconds);
  gpu_sharing(job, a, spec);
  if (spec.sweep.device == "cuda" && job.gpus_per_task == 0 && job.runs_per_gpu == 1)
    throw UserError(spec.file + ": device = \"cuda\": give --gpus-per-task 1 (one GPU per rank), or --runs-per-gpu k");
  return job;
}

// Resources the job asks for but will not use, said before anything is written.
void warn_of_idle_resources(const SbatchJob& job, const SweepSpec& spec, std::size_t runs) {
  if (spec.sweep.device != "cuda" && job.gpus_per_task > 0)
    fmt::print(stderr, "lrbench: warning: {} runs on the CPU; --gpus-per-task {} asks for GPUs it will not use\n", spec.file,
               job.gpus_per_task);
  if (job.gpus_per_task > 1)
    fmt::print(stderr, "lrbench: warning: each rank runs on one GPU; with --gpus-per-task {} the others stay idle "
                       "(use more tasks instead)\n", job.gpus_per_task);
  if (spec.sweep.threads > job.cpus_per_task)
    fmt::print(stderr, "lrbench: warning: the sweep uses {} threads per rank but --cpus-per-task is {}\n",
               spec.sweep.threads, job.cpus_per_task);
  if (job.array && job.array->count() > static_cast<int>(runs))
    fmt::print(stderr, "lrbench: warning: {} array tasks for {} runs: some tasks will have nothing to do\n",
               job.array->count(), runs);
}

// What the job runs: the launcher when started through it (it blocks stop signals until
// the handlers are in), and a copy of the sweep file named by its content, so that editing
// the file (or writing the scripts again for a new version) never changes a queued job.
void set_job_paths(SbatchJob& job, const SlurmArgs& a, const SweepSpec& spec, const std::string& sweep_text) {
  std::error_code ec;
  if (const char* launcher = std::getenv("LRB_EXECUTABLE"); launcher && fs::path(launcher).is_absolute())
    job.lrbench = launcher;
  else
    job.lrbench = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw UserError("cannot find the path of the lrbench binary (/proc/self/exe): " + ec.message());
  check_script_path("the lrbench binary", job.lrbench);
  if (!is_slurm_name(job.name))
    throw UserError(spec.file + ": the sweep's name '" + job.name +
                    "' cannot be a Slurm job name: use letters, digits, '.', '_' and '-' (at most 64)");
  job.out = results_folder(a.out, job.name);
  const fs::path slurm_dir = ResultsLayout(job.out).slurm();
  job.spec = slurm_dir / (job.name + "-" + sha256_hex(sweep_text).substr(0, 12) + ".toml");
  job.script = slurm_dir / (job.name + (job.array ? "-array.sbatch" : ".sbatch"));
  job.array_script = job.script;
}

// Every script rendered (every value checked) before any is written.
void write_scripts(const SbatchJob& job, const fs::path& final_script, const std::string& sweep_text) {
  const std::string script_text = render_sweep_script(job);
  std::string final_text;
  if (job.array) {
    SbatchJob final_job = job;
    final_job.script = final_script;
    final_text = render_final_script(final_job);
  }
  write_file_atomic(job.spec, sweep_text);
  write_file_atomic(job.script, script_text);
  if (job.array) write_file_atomic(final_script, final_text);
}

// Without --submit: the scripts' paths on stdout, how to submit them on stderr.
void print_how_to_submit(const SbatchJob& job, const SweepSpec& spec, const fs::path& final_script, const std::string& runs) {
  fmt::print("{}\n", job.script.string());
  if (job.array) fmt::print("{}\n", final_script.string());
  std::fflush(stdout);  // the paths first, then the advice on stderr
  if (job.array && job.sequential)
    fmt::print(stderr, "lrbench: a sequential study ({}): each array runs one wave, and its final job judges the look and "
                       "submits the next array and itself, until the study ends\n",
               spec.sweep.sequential->text());
  if (job.array) {
    fmt::print(stderr, "lrbench: {}: array {} ({} shard(s)), then merge and report. Submit with:\n"
                       "  id=$(sbatch --parsable {}) && sbatch --dependency=afterany:$id {}\n",
               runs, job.array->text(), job.array->count(), job.script.string(), final_script.string());
  } else {
    fmt::print(stderr, "lrbench: {} on {} task(s). Submit with: sbatch {}\n", runs, job.nodes * job.ntasks_per_node,
               job.script.string());
  }
}

void submit_scripts(const SbatchJob& job, const fs::path& final_script, const std::string& runs) {
  const fs::path slurm_dir = job.script.parent_path();
  if (job.array && job.sequential) {
    // What the study looked like when this array was submitted: its final job submits the
    // next wave only if the array changed it (status_line's fields).
    const ProgramResult st = run_program({job.lrbench.string(), "status", job.out.string(), "--spec", job.spec.string()});
    if (st.exit_code != 0) throw UserError("cannot read the study's status before submitting: " + st.err + st.out);
    write_file_atomic(slurm_dir / (job.name + "-array.submitted"), st.out);
  }
  const std::string id = submit({}, job.script);
  fmt::print("{}\n", id);
  std::fflush(stdout);
  if (job.array) {
    // afterany: the report is wanted even when some array task failed or gave up.
    const std::string final_id = submit({"--dependency=afterany:" + id}, final_script);
    fmt::print("{}\n", final_id);
    std::fflush(stdout);
    fmt::print(stderr, "lrbench: submitted job array {} ({}, {}) and job {} (merge and report, after it); logs in {}\n", id,
               runs, job.array->text(), final_id, slurm_dir.string());
  } else {
    fmt::print(stderr, "lrbench: submitted job {} ({}); log in {}\n", id, runs, slurm_dir.string());
  }
}

int slurm_command(const SlurmArgs& a) {
  // The sweep must be valid before anything is written: a job that would fail at start
  // costs a queue wait to find out.
  const SweepSpec spec = load_sweep_file(a.spec);
  const ExpandedSweep ex = expand_sweep(spec);
  SbatchJob job = job_resources(a, spec);
  warn_of_idle_resources(job, spec, ex.runs.size());
  const std::string sweep_text = read_user_file(a.spec, kMaxSweepFileBytes, "sweep file");
  set_job_paths(job, a, spec, sweep_text);
  // A sequential study's identity is settled now, before any shard starts (they read it).
  if (!a.study_id.empty() && !spec.sweep.sequential) throw UserError("--study-id names a sequential study; " + a.spec + " is a fixed design");
  if (spec.sweep.sequential)
    if (const std::string id = settle_study_id(job.out, a.study_id); !id.empty())
      fmt::print(stderr, "lrbench: study {} ({}): its seeds are its own\n", id, ResultsLayout(job.out).study_log().string());
  const fs::path final_script = job.script.parent_path() / (job.name + "-final.sbatch");
  write_scripts(job, final_script, sweep_text);
  const std::string runs = fmt::format("{} run(s)", ex.runs.size());
  if (a.submit)
    submit_scripts(job, final_script, runs);
  else
    print_how_to_submit(job, spec, final_script, runs);
  return kExitDone;
}

void add_slurm_command(CLI::App& app, CommandResult& result) {
  auto a = std::make_shared<SlurmArgs>();
  auto* cmd = app.add_subcommand(
      "slurm", "write the sbatch script of a sweep into its results folder (and print its path); --submit submits it");
  cmd->add_option("spec", a->spec, "the sweep file (TOML)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--out,-o", a->out, "results folder (default: results/<sweep name>); the scripts go to DIR/slurm/");
  cmd->add_option("--nodes,-N", a->nodes, "nodes (default 1)");
  cmd->add_option("--ntasks-per-node", a->ntasks_per_node, "MPI ranks per node (default 1, or the sweep's ranks_per_run)");
  cmd->add_option("--gpus-per-task", a->gpus_per_task, "GPUs per rank (default 0; 1 for device = \"cuda\")");
  cmd->add_option("--runs-per-gpu", a->runs_per_gpu,
                  "ranks sharing each GPU (default 1; the sweep's runs_per_gpu must allow it): k x --gpus-per-node tasks a node");
  cmd->add_option("--gpus-per-node", a->gpus_per_node, "with --runs-per-gpu: the GPUs each node gives its tasks (default 1)");
  cmd->add_option("--cpus-per-task,-c", a->cpus_per_task, "cores per rank (default: the sweep's threads, or 1 for auto)");
  cmd->add_option("--time,-t", a->time, "time limit per attempt, as sbatch takes it (90, 2:00:00, 1-00:00:00)");
  cmd->add_option("--partition,-p", a->partition, "partition (default: the cluster's)");
  cmd->add_option("--account,-A", a->account, "account to charge (default: yours)");
  cmd->add_option("--array", a->array, "array mode: N tasks (or A-B), %M at a time; each runs one shard of the sweep");
  cmd->add_option("--signal-lead", a->signal_lead,
                  "seconds before the time limit at which every rank checkpoints and the job requeues (default 120)");
  cmd->add_option("--study-id", a->study_id, "a sequential study: take this identity instead of a random one (`run --study-id`)");
  cmd->add_flag("--submit", a->submit, "submit with sbatch and print the job id (array mode: the array's, then the final job's)");
  cmd->callback([a, &result] { result.exit_code = slurm_command(*a); });
}

LRB_REGISTER_COMMAND(add_slurm_command);

}  // namespace
}  // namespace lrb
