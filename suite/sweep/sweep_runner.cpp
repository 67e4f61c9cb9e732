#include "suite/sweep/sweep_runner.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <fmt/core.h>

#include <cstdio>
#include <functional>
#include <memory>
#include <optional>

#include "suite/config/expand.h"
#include "suite/config/sweep_spec.h"
#include "suite/core/call_watch.h"
#include "suite/core/environment.h"
#include "suite/core/exit_codes.h"
#include "suite/core/stop_flag.h"
#include "suite/mpi/mpi_run_group.h"
#include "suite/mpi/nccl_run_group.h"
#include "suite/mpi/mpi_session.h"
#include "suite/mpi/work_queue.h"
#include "suite/run/data_cache.h"
#include "suite/run/runner.h"
#include "suite/runtime/counting_allocator.h"
#include "suite/runtime/precision.h"
#include "suite/store/results_folder.h"
#include "suite/store/study_log.h"
#include "suite/sweep/gpu_setup.h"
#include "suite/sweep/job_provenance.h"
#include "suite/sweep/job_steps.h"
#include "suite/sweep/rank_layout.h"
#include "suite/sweep/results_folder_setup.h"
#include "suite/sweep/run_selection.h"

namespace lrb {

namespace fs = std::filesystem;

namespace {

// The sweep as every rank reads it, and this rank's share of the work.
struct Job {
  SweepSpec spec;
  ExpandedSweep ex;
  int threads = 1;
  bool auto_threads = false;         // threads = "auto" (and no --threads): cores / ranks on the node
  std::vector<std::size_t> mine;     // indices into ex.runs of this shard's runs
  std::vector<std::string> varying;  // the settings that tell runs apart, for their labels
};

// Runs this rank's part of a phase. An error is printed and becomes the exit code the rank
// gives to the next step: the user's to fix (2), or the machine's (1: a full disk,
// permissions, a device) — `where` ("host h rank r") goes in front of the latter.
int exit_code_of(const std::function<void()>& phase, const std::string& where = "") {
  try {
    phase();
    return kExitDone;
  } catch (const UserError& e) {
    fmt::print(stderr, "lrbench: error: {}\n", e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    if (where.empty()) fmt::print(stderr, "lrbench: error: {}\n", e.what());
    else fmt::print(stderr, "lrbench: {}: {}\n", where, e.what());
    return kExitInternal;
  }
}

// bf16 on a CPU without it, refused before any run with the line that asks for it (each run
// checks again on its own device: a GPU's answer is known only once a rank has bound one).
std::string bf16_refused_here(const SweepSpec& spec) {
  if (spec.sweep.device != "cpu") return "";
  for (const auto& axis : spec.train)
    if (axis.name == "precision")
      for (const auto& v : axis.values)
        if (v == "bf16")
          if (const std::string why = precision_refusal("bf16", at::Device(at::kCPU)); !why.empty()) return axis.where.str() + ": " + why;
  return "";
}

// Every rank validates and expands the same file the same way; a bad file stops every rank
// with the same message (printed once) before any work.
Job read_sweep(const MpiSession& mpi, JobSteps& steps, const SweepRunOptions& options) {
  Job job;
  std::string problem;
  try {
    job.spec = load_sweep_file(options.spec_file);
    set_call_time_limit(job.spec.sweep.step_time_limit);  // a trial forward at expansion is watched too
    job.ex = expand_sweep(job.spec);
    const SweepSpec& spec = job.spec;
    // The exchange first: it names the line to change (a build without NCCL may also lack CUDA).
    if (spec.sweep.exchange == "nccl" && !nccl_compiled())
      problem = fmt::format("{}: exchange = \"nccl\" but this lrbench was built without NCCL (LRB_WITH_NCCL off): build it with "
                            "-DLRB_WITH_CUDA=ON -DLRB_WITH_NCCL=ON, or set exchange = \"mpi\" (or \"auto\")",
                            spec.sweep.exchange_at.str());
    else if (spec.sweep.device == "cuda" && !at::hasCUDA())
      problem = fmt::format("{}: device = \"cuda\" but this LibTorch has no CUDA; use a CUDA build of LibTorch (Torch_DIR) or device = \"cpu\"",
                            spec.file);
    else if (mpi.size() % spec.sweep.ranks_per_run != 0)
      problem = fmt::format("{}: ranks_per_run = {} does not divide the job's {} rank(s): start a multiple of {} ranks (mpirun -np, "
                            "srun --ntasks), or change ranks_per_run",
                            spec.sweep.ranks_per_run_at.str(), spec.sweep.ranks_per_run, mpi.size(), spec.sweep.ranks_per_run);
    if (problem.empty()) problem = bf16_refused_here(spec);
    if (problem.empty()) job.mine = selected_runs(job.ex.runs, options.shard, options.only, spec.sweep.sequential.has_value());
  } catch (const UserError& e) {
    problem = e.what();
  }
  if (!problem.empty() && mpi.rank() == 0) fmt::print(stderr, "lrbench: error: {}\n", problem);
  steps.agree(JobStep::sweep_read, problem.empty() ? kExitDone : kExitUsage);

  const int requested = options.threads >= 0 ? options.threads : job.spec.sweep.threads;
  job.auto_threads = requested <= 0;
  job.threads = requested > 0 ? requested : std::max(1, available_cores() / std::max(1, mpi.local_size()));
  at::set_num_threads(job.threads);
  std::vector<nlohmann::json> specs;
  for (const auto& r : job.ex.runs) specs.push_back(r.spec);
  job.varying = varying_paths(specs);
  return job;
}

// Rank 0 opens the results folder; every rank learns whether it could, and whether a stop
// came during start-up (then nothing has started, and the same command resumes).
std::optional<OpenedFolder> open_folder(const MpiSession& mpi, JobSteps& steps, const Job& job, const SweepRunOptions& options) {
  std::optional<OpenedFolder> opened;
  int failed = kExitDone;
  if (mpi.rank() == 0)
    failed = exit_code_of([&] {
      opened = open_results_folder(options.out_dir, job.spec, job.ex, job.mine, options.shard, options.retry_failed, options.study_id);
    });
  // Usage (2) wins over environment (1): both stop every rank before any work.
  steps.agree(JobStep::folder_opened, failed);
  try {
    steps.agree(JobStep::started, stop_requested() ? kExitStopped : kExitDone);
  } catch (const JobEnds&) {
    if (mpi.rank() == 0) fmt::print(stderr, "lrbench: stopped by a signal before any run started; run the same command again to resume\n");
    throw;
  }
  return opened;
}

// A sequential study's identity, settled by rank 0 as it opened the folder, on every rank:
// every seed of its runs is mixed with it.
void join_study(const MpiSession& mpi, Job& job, const std::optional<OpenedFolder>& folder, const SweepRunOptions& options) {
  if (!job.spec.sweep.sequential) return;
  const std::string id = folder ? folder->study_id : read_study_log(options.out_dir).study_id;
  for (auto& r : job.ex.runs) r.study = id;
  if (mpi.rank() == 0 && !id.empty())
    fmt::print(stderr, "lrbench: study {} ({}): its seeds are its own; another folder is another study with other seeds\n", id,
               ResultsLayout(options.out_dir).study_log().string());
}

// Rank 0's scheduler of a sequential study: the judge from the CLI, and each run's queue item.
std::unique_ptr<SequentialSource> make_sequential_source(const SweepSpec& spec, const ExpandedSweep& ex,
                                                         const std::vector<std::size_t>& mine, std::vector<RunRecord> finished,
                                                         const SweepRunOptions& options, StudyClock* clock, bool refill_waves,
                                                         std::vector<std::string> varying) {
  if (!options.make_judge) throw UserError(spec.sweep.sequential_at.str() + ": this program cannot judge a sequential study");
  auto item_of = [&ex, varying = std::move(varying)](std::int64_t i) {
    const RunSpec& r = ex.runs[static_cast<std::size_t>(i)];
    return WorkItem{i, r.cost, describe_run(r, varying)};
  };
  return std::make_unique<SequentialSource>(spec, ex, mine, std::move(finished), options.make_judge(*spec.sweep.sequential, ex.claims),
                                            clock, item_of, refill_waves);
}

// The runs left to do, on every rank: rank 0's scan, or a sequential study's first wave
// (rank 0 judges each next look; `source` is set there).
std::vector<std::int64_t> plan_runs(const MpiSession& mpi, JobSteps& steps, const Job& job, const SweepRunOptions& options,
                                    ScanResult* scan, std::unique_ptr<StudyClock>* clock, std::unique_ptr<SequentialSource>* source) {
  if (job.spec.sweep.sequential) {
    int failed = kExitDone;
    if (mpi.rank() == 0)
      failed = exit_code_of([&] {
        *clock = std::make_unique<StudyClock>(options.out_dir);
        *source = make_sequential_source(job.spec, job.ex, job.mine, std::move(scan->finished_records), options, clock->get(),
                                         options.shard.whole(), job.varying);
        scan->pending = (*source)->initial();
      });
    steps.agree(JobStep::study_planned, failed);  // a study that cannot start stops every rank
  }
  return steps.share_from_rank0(JobStep::pending_shared, scan->pending);
}

// One GPU per rank, bound before any CUDA work; a rank that cannot have one stops the job.
void bind_gpu(const MpiSession& mpi, JobSteps& steps, RunContext& ctx, int runs_per_gpu) {
  const int failed = exit_code_of([&] { ctx.device_index = set_up_gpu(mpi, ctx.provenance, runs_per_gpu); }, mpi.label());
  steps.agree(JobStep::gpu_bound, failed);
  const std::string shared = gpus_shared_by_ranks(mpi, steps, ctx.provenance, runs_per_gpu);
  if (!shared.empty() && mpi.rank() == 0) fmt::print(stderr, "lrbench: error: {}\n", shared);
  if (!shared.empty()) throw JobEnds(kExitUsage);  // every rank found the same problem: each leaves here alike
}

// The context every run of this rank shares, its device bound and its peak measured.
RunContext run_context(const MpiSession& mpi, JobSteps& steps, const Job& job, const SweepRunOptions& options) {
  RunContext ctx;
  ctx.results_dir = options.out_dir;
  ctx.threads = job.threads;
  ctx.checkpoint_every = job.spec.sweep.checkpoint_every;
  ctx.provenance = job_provenance(mpi, job.spec, job.threads, options.shard);
  ctx.data_cache = data_cache_folder_from(options.data_cache);
  if (job.spec.sweep.device == "cuda") bind_gpu(mpi, steps, ctx, job.spec.sweep.runs_per_gpu);
  const int failed = exit_code_of([&] { set_matmul_peak(job.spec, ctx); }, mpi.label() + ": measuring the matrix-product peak");
  steps.agree(JobStep::ready_to_run, failed);
  return ctx;
}

struct QueueResult {
  QueueTotals totals;
  int internal_error = 0;  // a run whose record could not be stored
};

// The work queue: rank 0 hands out runs until none is left. With data parallelism the world
// is in groups of ranks_per_run; the first rank of each asks the queue and hands each run
// to the rest of its group.
QueueResult run_queue(const MpiSession& mpi, const Job& job, const std::vector<WorkItem>& items, ProgressBoard* board,
                      SequentialSource* source, RunContext& ctx) {
  const int ranks_per_run = job.spec.sweep.ranks_per_run;
  std::unique_ptr<MpiRunGroup> group;
  std::unique_ptr<NcclRunGroup> nccl_group;  // the gradients over NCCL; the rest over `group`
  if (ranks_per_run > 1) {
    group = std::make_unique<MpiRunGroup>(mpi, ranks_per_run);
    if (chosen_exchange(job.spec.sweep.exchange, job.spec.sweep.device) == "nccl")
      nccl_group = std::make_unique<NcclRunGroup>(*group, mpi);
  }
  ctx.group = nccl_group ? static_cast<RunGroup*>(nccl_group.get()) : group.get();
  const bool asks_queue = !group || group->rank() == 0;
  WorkQueue queue(mpi, items, board, ranks_per_run, source);
  std::optional<std::pair<std::int64_t, ItemOutcome>> previous;
  std::string message;  // a sequential study's judge reads the finished run's record
  QueueResult result;
  for (;;) {
    std::optional<std::int64_t> idx;
    if (!group) {
      idx = queue.next(previous, message);
    } else {
      const std::int64_t shared = group->share_from_leader(asks_queue ? queue.next(previous, message).value_or(-1) : -1);
      if (shared >= 0) idx = shared;
    }
    if (!idx) break;
    const RunSpec& run = job.ex.runs[static_cast<std::size_t>(*idx)];
    ItemOutcome outcome = ItemOutcome::Failed;
    message.clear();  // nothing stored, nothing for the judge: the run's look waits for the next session
    try {
      RunOutcome r = execute_run(run, ctx);
      outcome = r.status == RunStatus::Ok ? ItemOutcome::Ok : r.status == RunStatus::Failed ? ItemOutcome::Failed : ItemOutcome::Stopped;
      // A group's member 0 speaks for it (the others end the same way).
      if (r.status != RunStatus::Ok && asks_queue)
        fmt::print(stderr, "lrbench: {} {}: {}\n", describe_run(run, job.varying), status_name(r.status), r.error);
      if (job.spec.sweep.sequential && asks_queue && r.status != RunStatus::Stopped) message = study_message(r.record);
    } catch (const std::exception& e) {
      // Publishing the record failed: nothing of this run is stored. Report and go on.
      fmt::print(stderr, "lrbench: {} ({}): could not store the result: {}\n", describe_run(run, job.varying), mpi.label(), e.what());
      result.internal_error = 1;
    }
    previous = std::make_pair(*idx, outcome);
  }
  result.totals = queue.finish();
  return result;
}

// Rank 0's last lines: what ran, what the study concluded, what to do next.
void print_summary(const Job& job, const SweepRunOptions& options, const ScanResult& scan, const QueueTotals& totals,
                   const SequentialSource* source) {
  const Shard& shard = options.shard;
  const int failed = totals.failed + scan.finished_failed;
  const std::string scope = !options.only.empty() ? fmt::format("--only: {} of the sweep's {} runs", job.mine.size(), job.ex.runs.size())
                            : shard.whole()       ? fmt::format("{} runs in the sweep", job.ex.runs.size())
                                                  : fmt::format("shard {}: {} of the sweep's {} runs", shard.text(), job.mine.size(), job.ex.runs.size());
  fmt::print(stderr, "lrbench: {}: {} ran now ({} ok, {} failed, {} stopped), {} were already finished\n", scope,
             totals.ok + totals.failed + totals.stopped, totals.ok, totals.failed, totals.stopped, scan.finished);
  if (source) {
    const WavePlan& plan = source->plan();
    if (plan.end != WavePlan::End::Running)
      fmt::print(stderr, "lrbench: sequential study ended: {} (lrbench report {} shows each claim's looks)\n", plan.summary,
                 options.out_dir.string());
    else if (!shard.whole() && !totals.stopped)
      fmt::print(stderr, "lrbench: sequential study: this shard's part of the wave is done; the next look comes when every "
                         "shard's is (the final job of the array judges it and submits the next wave)\n");
    if (source->speculative())
      fmt::print(stderr, "lrbench: {} run(s) of a next wave started while a look waited for runs in flight\n", source->speculative());
  }
  if (totals.stopped) fmt::print(stderr, "lrbench: stopped; run the same command again to resume\n");
  else if (failed) fmt::print(stderr, "lrbench: {} run(s) failed; `lrbench report {}` shows why\n", failed, options.out_dir.string());
}

// One process on several cores with several runs to do, its threads left to lrbench: say
// that a rank per core is the faster layout (measured: docs/benchmarks.md, "Thread layout").
void suggest_rank_per_core(const Job& job, std::size_t runs) {
  if (launched_under_mpi() || !job.auto_threads || job.spec.sweep.device != "cpu") return;
  const int cores = available_physical_cores();
  if (runs < 2 || cores < 2 || job.threads < 2) return;
  fmt::print(stderr, "lrbench: note: {} runs on one rank with {} threads; `--ranks auto` runs them on {} ranks (one per core), "
                     "which ran the quickstart's runs {} faster on 2 cores (docs/benchmarks.md, \"Thread layout\")\n",
             runs, job.threads, std::min<std::size_t>(runs, static_cast<std::size_t>(cores)), kRankPerCoreGain);
}

// The job from its sweep file to its exit code, every collective a step of `steps`.
int run_job(const MpiSession& mpi, JobSteps& steps, const SweepRunOptions& options) {
  Job job = read_sweep(mpi, steps, options);
  std::optional<OpenedFolder> folder = open_folder(mpi, steps, job, options);  // rank 0's; empty elsewhere
  ScanResult scan = folder ? std::move(folder->scan) : ScanResult{};
  join_study(mpi, job, folder, options);
  std::unique_ptr<StudyClock> clock;
  std::unique_ptr<SequentialSource> source;
  const std::vector<std::int64_t> pending = plan_runs(mpi, steps, job, options, &scan, &clock, &source);

  std::vector<WorkItem> items;
  for (auto i : pending) {
    const RunSpec& r = job.ex.runs[static_cast<std::size_t>(i)];
    items.push_back({i, r.cost, describe_run(r, job.varying)});
  }
  std::unique_ptr<ProgressBoard> board;
  if (mpi.rank() == 0) {
    if (!job.ex.skipped.empty())
      fmt::print(stderr, "lrbench: {} combination(s) skipped (listed in {})\n", job.ex.skipped.size(),
                 ResultsLayout(options.out_dir).manifest().string());
    board = std::make_unique<ProgressBoard>(items, mpi.size(), scan.finished, stderr);
    suggest_rank_per_core(job, items.size());
    if (job.spec.sweep.ranks_per_run > 1)
      fmt::print(stderr, "lrbench: data parallel: each run trains on {} ranks, {} run(s) at a time\n", job.spec.sweep.ranks_per_run,
                 mpi.size() / job.spec.sweep.ranks_per_run);
  }
  RunContext ctx = run_context(mpi, steps, job, options);
  const QueueResult queued = run_queue(mpi, job, items, board.get(), source.get(), ctx);
  const int internal_error = steps.largest_code(JobStep::runs_done, queued.internal_error);

  if (mpi.rank() == 0) print_summary(job, options, scan, queued.totals, source.get());
  // Every rank exits with the same code (rank 0 alone knows the failures found by the scan).
  int code = kExitDone;
  if (internal_error) code = kExitInternal;
  else if (queued.totals.stopped) code = kExitStopped;
  else if (queued.totals.failed + scan.finished_failed > 0) code = kExitFailedRuns;
  return steps.last_step(JobStep::exit_code, mpi.rank() == 0 ? code : kExitDone);
}

}  // namespace

int run_sweep(const SweepRunOptions& options) {
  MpiSession mpi(nullptr, nullptr);
  install_stop_handlers();
  CpuMemoryCounter::install();
  JobSteps steps(mpi);
  try {
    return run_job(mpi, steps, options);
  } catch (const JobEnds& e) {
    return e.code;
  }
}

}  // namespace lrb
