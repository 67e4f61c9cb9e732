// lrb_make_results DIR FIRST COUNT: writes synthetic runs FIRST .. FIRST+COUNT-1 into the
// results folder DIR (runs/<key>.h5 as lrbench writes them, and DIR/sweep.json listing
// runs 0 .. FIRST+COUNT-1), for measuring the results side at 1k .. 100k runs
// (tests/bench/results_scale.sh) without training 100,000 models.
//
// The study's shape is fixed, the seeds grow: 2 tasks x 5 models x 4 learning rates = 40
// cells; run i is cell i % 40 at seed i / 40. Every run file is as large as a real one of
// the quickstart (300 training steps of curves, the full metric set and provenance); one
// run in 100 failed, with its reason.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "suite/config/run_spec.h"
#include "suite/store/results_layout.h"
#include "suite/store/run_file.h"
#include "suite/store/sweep_manifest.h"

namespace {

using json = nlohmann::json;
constexpr int kTasks = 2, kModels = 5, kRates = 4, kCells = kTasks * kModels * kRates;
const char* const kTaskNames[kTasks] = {"listops", "fashion-mnist"};
const char* const kModelNames[kModels] = {"transformer", "longformer", "bigbird", "linear", "maelre"};
const double kRatesValues[kRates] = {5e-4, 1e-3, 2e-3, 4e-3};

json spec_of(std::int64_t i) {
  const int cell = static_cast<int>(i % kCells);
  const int task = cell / (kModels * kRates), model = (cell / kRates) % kModels, rate = cell % kRates;
  return json{{"base_seed", 1},
              {"device", "cpu"},
              {"model", {{"name", kModelNames[model]},
                         {"options", {{"depth", 2}, {"dim", 32}, {"dropout", 0.1}, {"heads", 4}, {"mlp_ratio", 4}, {"pooling", "mean"}}}}},
              {"seed_index", i / kCells},
              {"task", {{"name", kTaskNames[task]},
                        {"options", {{"metrics", "accuracy,macro_f1"}, {"train_size", 10000}}},
                        {"seq_len", 784}}},
              {"train", {{"batch_size", 32}, {"beta1", 0.9}, {"beta2", 0.999}, {"eval_every", 100}, {"eval_size", 1000},
                         {"grad_clip", 1.0}, {"lr", kRatesValues[rate]}, {"memory_budget", 0}, {"optimizer", "adamw"},
                         {"schedule", "cosine"}, {"steps", 300}, {"warmup_steps", 30}, {"weight_decay", 0.01}}},
              {"version", 1}};
}

lrb::RunRecord record_of(std::int64_t i) {
  std::mt19937_64 rng(static_cast<std::uint64_t>(i) * 0x9E3779B97F4A7C15ull + 1);
  std::normal_distribution<double> noise(0.0, 0.01);
  lrb::RunRecord r;
  r.spec = spec_of(i);
  r.key = lrb::run_key_of(r.spec);
  const int cell = static_cast<int>(i % kCells);
  const bool failed = (i * 7919) % 100 == 13;
  r.status = failed ? lrb::RunStatus::Failed : lrb::RunStatus::Ok;
  if (failed) r.error = "out of memory: the step needed 2.1 GiB, the budget is 2.0 GiB";
  r.provenance = {{"attempt", 1}, {"finished_at", "2026-12-01T15:25:10Z"}, {"git_dirty", false},
                  {"git_revision", "f78000a5485af80daa56307703147125a1f3547b"}, {"hdf5_version", "1.10.8"},
                  {"host", "node" + std::to_string(i % 64)}, {"local_rank", 0}, {"local_size", 1},
                  {"lrbench_version", "0.1.0"}, {"mpi_library", "Open MPI v4.1.4"}, {"pid", 1000 + i % 30000},
                  {"rank", i % 64}, {"slurm", json::object()}, {"started_at", "2026-12-01T15:23:54Z"},
                  {"sweep", "synthetic"}, {"sweep_file", "synthetic.toml"}, {"threads", 1},
                  {"torch_version", "1.13.0"}, {"world_size", 64}};
  r.records = {{"model", json::object()},
               {"task", {{"metrics", {"accuracy", "macro_f1"}}, {"modality", "grid"}, {"num_classes", 10}}}};
  const double acc = 0.6 + 0.05 * (cell / kRates % kModels) + 0.01 * (cell % kRates) + noise(rng);
  r.metrics = {{"eval_accuracy", acc}, {"eval_macro_f1", acc - 0.01}, {"eval_loss", 1.5 - acc}, {"eval_chance", 0.1},
               {"train_loss", 1.4 - acc}, {"params", 26000.0 + 1000 * (cell % kModels)}, {"flops_per_sample", 4e6},
               {"samples_per_s", 900 + 100 * noise(rng)}, {"tokens_per_s", 700000.0}, {"step_seconds_median", 0.035},
               {"step_seconds_p95", 0.04}, {"peak_bytes", 5.2e7 + 1e6 * (cell % kModels)}, {"peak_step_bytes", 4.1e7},
               {"memory_budget_bytes", 0}, {"steps_done", failed ? 120.0 : 300.0}, {"data_bytes", 3.1e7},
               {"wall_seconds", 12.0}};
  if (failed) r.metrics.erase("eval_accuracy");
  const int steps = 300;
  for (const char* name : {"train_step", "train_loss", "lr", "step_seconds", "step_peak_bytes"}) {
    auto& c = r.curves[name];
    for (int s = 0; s < steps; ++s) c.push_back(s * 0.01 + noise(rng));
  }
  for (const char* name : {"eval_step", "eval_accuracy", "eval_loss", "eval_macro_f1"}) r.curves[name] = {0.1, 0.2, acc};
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: lrb_make_results DIR FIRST COUNT\n");
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  const std::int64_t first = std::atoll(argv[2]), count = std::atoll(argv[3]);
  const lrb::ResultsLayout layout(dir);
  for (std::int64_t i = first; i < first + count; ++i) {
    const lrb::RunRecord r = record_of(i);
    lrb::write_run_file(layout.run_file(r.key), r);
  }
  lrb::SweepManifest manifest;
  manifest.sweep = "synthetic";
  manifest.file = "synthetic.toml";
  for (std::int64_t i = 0; i < first + count; ++i) manifest.runs.push_back(lrb::run_key_of(spec_of(i)));
  lrb::write_sweep_manifest(dir, manifest);
  return 0;
}
