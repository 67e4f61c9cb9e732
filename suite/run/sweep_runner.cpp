#include "suite/run/sweep_runner.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <unistd.h>
#include <fmt/core.h>
#include <fmt/format.h>
#include <torch/version.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>

#include "suite/config/expand.h"
#include "suite/config/sweep_spec.h"
#include "suite/core/cache_folder.h"
#include "suite/core/environment.h"
#include "suite/core/exit_codes.h"
#include "suite/core/files.h"
#include "suite/core/stop_flag.h"
#include "suite/core/version.h"
#include "suite/hdf5/h5.h"
#include "suite/mpi/mpi_run_group.h"
#include "suite/mpi/mpi_session.h"
#include "suite/mpi/work_queue.h"
#include "suite/run/data_cache.h"
#include "suite/run/matmul_peak.h"
#include "suite/run/runner.h"
#include "suite/runtime/counting_allocator.h"
#include "suite/runtime/cuda_device.h"
#include "suite/runtime/gpu_binding.h"
#include "suite/store/results_folder.h"
#include "suite/store/results_index.h"
#include "suite/store/study_log.h"
#include "suite/store/run_file.h"
#include "suite/store/sweep_manifest.h"

#include <mpi.h>

namespace lrb {

namespace fs = std::filesystem;

namespace {

// Rank 0 decides what is left to do; every rank gets the same list.
std::vector<std::int64_t> share_pending(const MpiSession& mpi, std::vector<std::int64_t> pending) {
  if (!mpi.using_mpi() || mpi.size() == 1) return pending;
  std::int64_t n = static_cast<std::int64_t>(pending.size());
  LRB_MPI_CHECK(MPI_Bcast(&n, 1, MPI_INT64_T, 0, MPI_COMM_WORLD));
  pending.resize(static_cast<std::size_t>(n));
  if (n > 0) LRB_MPI_CHECK(MPI_Bcast(pending.data(), static_cast<int>(n), MPI_INT64_T, 0, MPI_COMM_WORLD));
  return pending;
}

// The peak a run's utilisation is measured against: once per host, build, device and thread
// count, cached; the ranks of a machine take turns, before any of them trains.
void set_matmul_peak(const SweepSpec& spec, RunContext& ctx) {
  const at::Device device = spec.sweep.device == "cuda" ? at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(ctx.device_index))
                                                        : at::Device(at::kCPU);
  const MatmulPeak peak = matmul_peak(device, ctx.threads, user_cache_folder());
  ctx.peak_flops_per_s = peak.flops_per_s;
  ctx.provenance["matmul_peak"] = peak.to_json();
}

nlohmann::json job_provenance(const MpiSession& mpi, const SweepSpec& spec, int threads, const Shard& shard) {
  const BlasInfo blas = loaded_blas();
  nlohmann::json j = {{"host", mpi.host()},
                      {"rank", mpi.rank()},
                      {"world_size", mpi.size()},
                      {"local_rank", mpi.local_rank()},
                      {"local_size", mpi.local_size()},
                      {"threads", threads},
                      {"sweep", spec.sweep.name},
                      {"sweep_file", spec.file},
                      {"lrbench_version", lrbench_version()},
                      {"git_revision", git_revision()},
                      {"git_dirty", git_dirty()},
                      {"torch_version", TORCH_VERSION},
                      {"blas", blas.library},
                      {"blas_config", blas.config},
                      {"blas_core", blas.core},  // the kernels OpenBLAS chose: a fallback runs several times slower
                      {"openblas_coretype", std::getenv("OPENBLAS_CORETYPE") ? std::getenv("OPENBLAS_CORETYPE") : ""},
                      {"blas_core_choice", blas.choice},  // who set openblas_coretype, and why
                      {"hdf5_version", h5::library_version()},
                      {"mpi_library", mpi_library_version()},
                      {"slurm", slurm_environment()},
                      {"pid", static_cast<long>(::getpid())}};
  if (!shard.whole()) j["shard"] = shard.text();
  // Which GPUs this rank could see (Slurm's --gpus-per-task binding sets it per task).
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES")) j["cuda_visible_devices"] = v;
  return j;
}

// Binds this rank to its GPU (gpu_binding.h), applies the settings that make matched
// seeds repeat on it, and records both with the GPU's description. Returns the device.
int set_up_gpu(const MpiSession& mpi, nlohmann::json& provenance) {
  const nlohmann::json determinism = apply_cuda_determinism();
  const GpuBinding gpu = bind_gpu(process_env(), mpi.local_rank(), mpi.local_size(), cuda_device_count(), mpi.host());
  use_cuda_device(gpu.device_index);
  nlohmann::json description = gpu_description(gpu.device_index);
  description["binding"] = gpu.to_json();
  provenance["gpu"] = description;
  provenance["cuda"] = cuda_versions();
  provenance["determinism"] = determinism;
  return gpu.device_index;
}

// Every rank's physical GPU, compared across the job (collective: every rank calls it once
// every rank has its GPU): two ranks on one GPU would measure each other, and a
// CUDA_VISIBLE_DEVICES given to every rank alike binds them all to one. Returns the
// problem, identical on every rank, or "".
std::string gpus_shared_by_ranks(const MpiSession& mpi, const nlohmann::json& provenance) {
  if (mpi.using_mpi() && mpi.size() > 1) {
    constexpr int kIdBytes = 256;
    std::string id = mpi.host() + "/" + provenance.at("gpu").value("pci_bus_id", std::string("?"));
    id.resize(std::min<std::size_t>(id.size(), kIdBytes - 1));
    id.resize(kIdBytes, '\0');  // NUL-terminated within its slot
    std::vector<char> all(static_cast<std::size_t>(kIdBytes) * static_cast<std::size_t>(mpi.size()));
    LRB_MPI_CHECK(MPI_Allgather(id.data(), kIdBytes, MPI_CHAR, all.data(), kIdBytes, MPI_CHAR, MPI_COMM_WORLD));
    std::vector<std::string> ids;
    for (int r = 0; r < mpi.size(); ++r) ids.emplace_back(all.data() + static_cast<std::ptrdiff_t>(r) * kIdBytes);
    if (const auto shared = shared_gpus(ids); !shared.empty())
      return fmt::format("ranks share a GPU ({}): give each rank its own (srun --gpus-per-task=1, or as many "
                         "ranks per node as GPUs with CUDA_VISIBLE_DEVICES unset)",
                         fmt::join(shared, "; "));
  }
  return "";
}

struct ScanResult {
  std::vector<std::int64_t> pending;
  int finished = 0, finished_failed = 0;
  std::vector<RunRecord> finished_records;  // kept for a sequential study's judge (index views)
};

// Looks at `mine` (indices into runs) only: a shard never touches another shard's files.
ScanResult scan_for_resume(const fs::path& out, const std::vector<RunSpec>& runs, const std::vector<std::size_t>& mine,
                           bool retry_failed, StaleScope stale_scope, bool keep_records) {
  ScanResult r;
  for (const auto& p : clear_stale_temporaries(out, stale_scope))
    fmt::print(stderr, "lrbench: removed a stale temporary file {}\n", p.string());
  for (const std::size_t i : mine) {
    const RunSpec& run = runs[i];
    const fs::path file = ResultsLayout(out).run_file(run.key);
    if (!fs::exists(file)) {
      r.pending.push_back(run.index);
      continue;
    }
    RunFileCheck check = read_run_file(file);
    if (!check.valid()) {
      const fs::path moved = quarantine_bad_file(out, file, check.reason);
      fmt::print(stderr, "lrbench: {} is damaged ({}); moved to {} and the run will be recomputed\n", file.string(),
                 check.reason, moved.string());
      r.pending.push_back(run.index);
      continue;
    }
    const RunStatus st = check.record->status;
    if (st == RunStatus::Ok || (st == RunStatus::Failed && !retry_failed)) {
      ++r.finished;
      if (keep_records) r.finished_records.push_back(index_view(std::move(*check.record)));
      if (st == RunStatus::Failed) ++r.finished_failed;
      // A process killed after publishing the run file and before removing the run's
      // checkpoint leaves one behind; the run is finished, so nothing will resume from it.
      std::error_code ec;
      if (fs::remove(ResultsLayout(out).checkpoint(run.key), ec))
        fmt::print(stderr, "lrbench: removed the checkpoint of finished run {}\n", run.key.substr(0, 12));
    } else {
      r.pending.push_back(run.index);
    }
  }
  return r;
}

// A shard of a sequential study judges its looks on every shard's finished runs: reads the
// others' run files (never moves or rewrites them; a damaged one counts as not finished).
void read_other_shards(const fs::path& out, const std::vector<RunSpec>& runs, const std::vector<std::size_t>& mine,
                       std::vector<RunRecord>& records) {
  std::vector<bool> is_mine(runs.size(), false);
  for (std::size_t i : mine) is_mine[i] = true;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (is_mine[i]) continue;
    const fs::path file = ResultsLayout(out).run_file(runs[i].key);
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) continue;
    RunFileCheck check = read_run_file(file);
    if (check.valid() && check.record->status != RunStatus::Stopped) records.push_back(index_view(std::move(*check.record)));
  }
}

// One results folder holds one sweep (by name): two sweeps written into one folder would be
// mixed in its tables. The same name again extends or resumes it.
void check_same_sweep(const fs::path& out, const SweepSpec& spec) {
  std::optional<SweepManifest> manifest;
  try {
    manifest = read_sweep_manifest(out);
  } catch (const UserError&) {
    return;  // a damaged manifest is ours to rewrite
  }
  if (!manifest) return;
  const std::string& name = manifest->sweep;
  if (name != spec.sweep.name)
    throw UserError(out.string() + " holds the results of sweep '" + name + "' (" + ResultsLayout(out).manifest().string() +
                    "); write sweep '" + spec.sweep.name + "' to another --out folder, so that reports do not mix them");
  // A sequential design's looks are planned from its first seeds on: changing first, step or
  // max on the way, or starting one on runs already seen, would spend the error twice.
  const auto& was = manifest->sequential;
  const auto& now = spec.sweep.sequential;
  if (was && now && *was != *now)
    throw UserError(spec.sweep.sequential_at, "this study started with seeds = { " + was->text() + " } (" +
                                                  ResultsLayout(out).manifest().string() + "); a sequential design cannot change "
                                                  "once it has looked at results: keep it, or start the new design in another --out folder");
  if (!was && now && !manifest->runs.empty() && fs::exists(ResultsLayout(out).runs()) && !fs::is_empty(ResultsLayout(out).runs()))
    throw UserError(spec.sweep.sequential_at, out.string() + " holds runs of this sweep as a fixed design; a sequential "
                                                             "design must start before any result is seen: write it to another --out folder");
  if (was && !now)
    throw UserError(out.string() + " holds a sequential study (seeds = { " + was->text() + " }); give the same design, or write "
                    "the fixed design to another --out folder");
}

// The shards of one sweep write the folder together, holding .lock shared; a whole sweep
// holds it exclusively. The shard count in use is recorded in DIR/.shard-layout: shards of
// another count (0/2 and 0/3 share runs) are refused while any shard is at work.
std::unique_ptr<FolderLock> lock_for_shard(const fs::path& out, const Shard& shard) {
  const ResultsLayout where(out);
  const fs::path layout = where.shard_layout();
  FileLock layout_lock(where.shard_layout_lock());  // serialises shard starts (brief)
  bool alone = false;
  try {
    FolderLock probe(where.folder_lock());  // exclusive: nobody else writes the folder now
    alone = true;
  } catch (const UserError&) {
  }
  if (alone) {
    write_file_atomic(layout, nlohmann::json{{"count", shard.count}}.dump() + "\n");
  } else {
    int count = 0;
    try {
      count = nlohmann::json::parse(read_user_file(layout, kMaxManifestBytes, "the shard layout")).at("count").get<int>();
    } catch (const std::exception&) {
      count = 0;  // unknown: another writer without a layout (a whole sweep) is refused below
    }
    if (count != shard.count)
      throw UserError("--shard " + shard.text() + ": " + out.string() + " is being written by " +
                      (count > 0 ? "the shards of a " + std::to_string(count) + "-way split (I/" + std::to_string(count) + ")"
                                 : std::string("another lrbench process")) +
                      "; shards of different counts would run the same runs twice: use --shard I/" +
                      (count > 0 ? std::to_string(count) : std::string("N")) + ", or wait for them to finish");
  }
  return std::make_unique<FolderLock>(where.folder_lock(), FolderLock::Mode::Shared);
}

void write_sweep_manifest(const fs::path& out, const SweepSpec& spec, const ExpandedSweep& ex) {
  write_sweep_manifest(out, make_sweep_manifest(spec, ex));
  write_file_atomic(ResultsLayout(out).sweep_file_copy(), read_file(spec.file));
}

// Rank 0's scheduler of a sequential study: the judge from the CLI, and each run's queue item.
std::unique_ptr<SequentialSource> make_sequential_source(const SweepSpec& spec, const ExpandedSweep& ex,
                                                         const std::vector<std::size_t>& mine, std::vector<RunRecord> finished,
                                                         const SweepRunOptions& options, StudyClock* clock, bool refill_waves) {
  if (!options.make_judge) throw UserError(spec.sweep.sequential_at.str() + ": this program cannot judge a sequential study");
  std::vector<std::string> varying;
  {
    std::vector<nlohmann::json> specs;
    for (const auto& r : ex.runs) specs.push_back(r.spec);
    varying = varying_paths(specs);
  }
  auto item_of = [&ex, varying](std::int64_t i) {
    const RunSpec& r = ex.runs[static_cast<std::size_t>(i)];
    return WorkItem{i, r.cost, describe_run(r, varying)};
  };
  return std::make_unique<SequentialSource>(spec, ex, mine, std::move(finished), options.make_judge(*spec.sweep.sequential, ex.claims),
                                            clock, item_of, refill_waves);
}

}  // namespace

int run_sweep(const SweepRunOptions& options) {
  MpiSession mpi(nullptr, nullptr);
  install_stop_handlers();
  CpuMemoryCounter::install();

  // Every rank validates and expands the same file the same way; a bad file stops every
  // rank with the same message (printed once) before any work.
  SweepSpec spec;
  ExpandedSweep ex;
  try {
    spec = load_sweep_file(options.spec_file);
    ex = expand_sweep(spec);
  } catch (const UserError& e) {
    if (mpi.rank() == 0) fmt::print(stderr, "lrbench: error: {}\n", e.what());
    return kExitUsage;
  }
  if (spec.sweep.device == "cuda" && !at::hasCUDA()) {
    if (mpi.rank() == 0)
      fmt::print(stderr, "lrbench: error: {}: device = \"cuda\" but this LibTorch has no CUDA; use a CUDA build of LibTorch (Torch_DIR) or device = \"cpu\"\n", spec.file);
    return kExitUsage;
  }

  const int ranks_per_run = spec.sweep.ranks_per_run;
  if (mpi.size() % ranks_per_run != 0) {
    if (mpi.rank() == 0)
      fmt::print(stderr, "lrbench: error: {}: ranks_per_run = {} does not divide the job's {} rank(s): start a multiple of {} "
                         "ranks (mpirun -np, srun --ntasks), or change ranks_per_run\n",
                 spec.sweep.ranks_per_run_at.str(), ranks_per_run, mpi.size(), ranks_per_run);
    return kExitUsage;
  }

  const int requested = options.threads >= 0 ? options.threads : spec.sweep.threads;
  const int threads = requested > 0 ? requested : std::max(1, available_cores() / std::max(1, mpi.local_size()));
  at::set_num_threads(threads);

  const fs::path out = options.out_dir;
  const Shard& shard = options.shard;
  std::vector<std::size_t> mine;
  for (std::size_t i = 0; i < ex.runs.size(); ++i)
    if (in_shard(ex.runs[i].key, shard)) mine.push_back(i);
  std::unique_ptr<FolderLock> lock, shard_lock;
  ScanResult scan;
  int setup_failed = 0;
  if (mpi.rank() == 0) {
    try {
      const ResultsLayout where(out);
      fs::create_directories(where.runs());
      fs::create_directories(where.checkpoints());
      if (shard.whole()) {
        lock = std::make_unique<FolderLock>(where.folder_lock());
      } else {
        // The shards of one sweep write the folder together (their runs are disjoint); a
        // whole sweep, shards of another count, or a second process for the same shard,
        // are refused meanwhile.
        lock = lock_for_shard(out, shard);
        shard_lock = std::make_unique<FolderLock>(where.shard_lock(shard.index, shard.count));
      }
      check_same_sweep(out, spec);
      scan = scan_for_resume(out, ex.runs, mine, options.retry_failed,
                             shard.whole() ? StaleScope::AnyHost : StaleScope::ThisHostOnly, spec.sweep.sequential.has_value());
      if (spec.sweep.sequential && !shard.whole()) read_other_shards(out, ex.runs, mine, scan.finished_records);
      write_sweep_manifest(out, spec, ex);
    } catch (const UserError& e) {
      fmt::print(stderr, "lrbench: error: {}\n", e.what());
      setup_failed = kExitUsage;
    } catch (const std::exception& e) {
      // The folder could not be made, listed or written (a full disk, permissions).
      fmt::print(stderr, "lrbench: error: {}\n", e.what());
      setup_failed = kExitInternal;
    }
  }
  // Usage (2) wins over environment (1): both stop every rank before any work.
  if (const int failed = mpi.max_over_ranks(setup_failed)) return failed;
  // A stop that came during start-up (MPI, the sweep file, the resume scan): nothing has
  // started, so nothing needs a checkpoint; the same command resumes.
  if (mpi.max_over_ranks(stop_requested() ? 1 : 0)) {
    if (mpi.rank() == 0)
      fmt::print(stderr, "lrbench: stopped by a signal before any run started; run the same command again to resume\n");
    return kExitStopped;
  }
  // A sequential study runs the wave its last look asks for; rank 0 judges each next look.
  std::unique_ptr<StudyClock> clock;
  std::unique_ptr<SequentialSource> source;
  if (spec.sweep.sequential) {
    int failed = kExitDone;
    if (mpi.rank() == 0) try {
      clock = std::make_unique<StudyClock>(out);
      source = make_sequential_source(spec, ex, mine, std::move(scan.finished_records), options, clock.get(), shard.whole());
      scan.pending = source->initial();
    } catch (const UserError& e) {
      fmt::print(stderr, "lrbench: error: {}\n", e.what());
      failed = kExitUsage;
    } catch (const std::exception& e) {
      fmt::print(stderr, "lrbench: error: {}\n", e.what());
      failed = kExitInternal;
    }
    // Every rank reaches this collective: a study that cannot start stops them all.
    if (const int code = mpi.max_over_ranks(failed)) return code;
  }
  const std::vector<std::int64_t> pending = share_pending(mpi, scan.pending);

  std::vector<std::string> varying;
  {
    std::vector<nlohmann::json> specs;
    for (const auto& r : ex.runs) specs.push_back(r.spec);
    varying = varying_paths(specs);
  }
  std::vector<WorkItem> items;
  for (auto i : pending) {
    const RunSpec& r = ex.runs[static_cast<std::size_t>(i)];
    items.push_back({i, r.cost, describe_run(r, varying)});
  }
  std::unique_ptr<ProgressBoard> board;
  if (mpi.rank() == 0) {
    if (!ex.skipped.empty())
      fmt::print(stderr, "lrbench: {} combination(s) skipped (listed in {})\n", ex.skipped.size(), ResultsLayout(out).manifest().string());
    board = std::make_unique<ProgressBoard>(items, mpi.size(), scan.finished, stderr);
    if (ranks_per_run > 1)
      fmt::print(stderr, "lrbench: data parallel: each run trains on {} ranks, {} run(s) at a time\n", ranks_per_run,
                 mpi.size() / ranks_per_run);
  }

  RunContext ctx;
  ctx.results_dir = out;
  ctx.threads = threads;
  ctx.checkpoint_every = spec.sweep.checkpoint_every;
  ctx.provenance = job_provenance(mpi, spec, threads, shard);
  ctx.data_cache = data_cache_folder_from(options.data_cache);
  if (spec.sweep.device == "cuda") {
    // One GPU per rank, bound before any CUDA work; a rank that cannot have one stops the job.
    int gpu_failed = kExitDone;
    try {
      ctx.device_index = set_up_gpu(mpi, ctx.provenance);
    } catch (const UserError& e) {
      fmt::print(stderr, "lrbench: error: {}\n", e.what());
      gpu_failed = kExitUsage;
    } catch (const std::exception& e) {
      fmt::print(stderr, "lrbench: {}: {}\n", mpi.label(), e.what());
      gpu_failed = kExitInternal;
    }
    if (const int code = mpi.max_over_ranks(gpu_failed); code != kExitDone) return code;
    if (const std::string shared = gpus_shared_by_ranks(mpi, ctx.provenance); !shared.empty()) {
      if (mpi.rank() == 0) fmt::print(stderr, "lrbench: error: {}\n", shared);
      return kExitUsage;
    }
  }

  set_matmul_peak(spec, ctx);

  // Data parallelism: the world in groups of ranks_per_run; the first rank of each asks the
  // queue and hands each run to the rest of its group.
  std::unique_ptr<MpiRunGroup> group;
  if (ranks_per_run > 1) group = std::make_unique<MpiRunGroup>(mpi, ranks_per_run);
  ctx.group = group.get();
  const bool asks_queue = !group || group->rank() == 0;

  WorkQueue queue(mpi, items, board.get(), ranks_per_run, source.get());
  std::optional<std::pair<std::int64_t, ItemOutcome>> previous;
  std::string message;  // a sequential study's judge reads the finished run's record
  int internal_error = 0;
  auto next_run = [&]() -> std::optional<std::int64_t> {
    if (!group) return queue.next(previous, message);
    std::int64_t idx = -1;
    if (asks_queue) idx = queue.next(previous, message).value_or(-1);
    idx = group->share_from_leader(idx);
    if (idx < 0) return std::nullopt;
    return idx;
  };
  while (auto idx = next_run()) {
    const RunSpec& run = ex.runs[static_cast<std::size_t>(*idx)];
    ItemOutcome outcome = ItemOutcome::Failed;
    message.clear();  // nothing stored, nothing for the judge: the run's look waits for the next session
    try {
      RunOutcome r = execute_run(run, ctx);
      outcome = r.status == RunStatus::Ok ? ItemOutcome::Ok : r.status == RunStatus::Failed ? ItemOutcome::Failed : ItemOutcome::Stopped;
      // A group's member 0 speaks for it (the others end the same way).
      if (r.status != RunStatus::Ok && asks_queue)
        fmt::print(stderr, "lrbench: {} {}: {}\n", describe_run(run, varying), status_name(r.status), r.error);
      if (spec.sweep.sequential && asks_queue && r.status != RunStatus::Stopped) message = study_message(r.record);
    } catch (const std::exception& e) {
      // Publishing the record failed: nothing of this run is stored. Report and go on.
      fmt::print(stderr, "lrbench: {} ({}): could not store the result: {}\n", describe_run(run, varying), mpi.label(), e.what());
      internal_error = 1;
    }
    previous = std::make_pair(*idx, outcome);
  }
  const QueueTotals totals = queue.finish();
  internal_error = mpi.max_over_ranks(internal_error);

  if (mpi.rank() == 0) {
    const int failed = totals.failed + scan.finished_failed;
    const std::string scope = shard.whole() ? fmt::format("{} runs in the sweep", ex.runs.size())
                                            : fmt::format("shard {}: {} of the sweep's {} runs", shard.text(), mine.size(), ex.runs.size());
    fmt::print(stderr, "lrbench: {}: {} ran now ({} ok, {} failed, {} stopped), {} were already finished\n", scope,
               totals.ok + totals.failed + totals.stopped, totals.ok, totals.failed, totals.stopped, scan.finished);
    if (source) {
      const WavePlan& plan = source->plan();
      if (plan.end != WavePlan::End::Running)
        fmt::print(stderr, "lrbench: sequential study ended: {} (lrbench report {} shows each claim's looks)\n", plan.summary, out.string());
      else if (!shard.whole() && !totals.stopped)
        fmt::print(stderr, "lrbench: sequential study: this shard's part of the wave is done; the next look comes when every "
                           "shard's is (the final job of the array judges it and submits the next wave)\n");
      if (source->speculative())
        fmt::print(stderr, "lrbench: {} run(s) of a next wave started while a look waited for runs in flight\n", source->speculative());
    }
    if (totals.stopped) fmt::print(stderr, "lrbench: stopped; run the same command again to resume\n");
    else if (failed) fmt::print(stderr, "lrbench: {} run(s) failed; `lrbench report {}` shows why\n", failed, out.string());
  }
  // Every rank exits with the same code (rank 0 alone knows the failures found by the scan).
  int code = kExitDone;
  if (internal_error) code = kExitInternal;
  else if (totals.stopped) code = kExitStopped;
  else if (totals.failed + scan.finished_failed > 0) code = kExitFailedRuns;
  return mpi.max_over_ranks(mpi.rank() == 0 ? code : 0);
}

}  // namespace lrb
