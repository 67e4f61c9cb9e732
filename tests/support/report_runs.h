#pragma once
// Results folders for report tests, written run by run with write_run_file: no training.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "suite/store/run_record.h"

namespace lrb::test {

struct RunDraft {
  std::string task = "listops";
  std::int64_t seq_len = 64;
  std::string model = "transformer";
  nlohmann::json model_options = nlohmann::json::object();
  int seed = 0;
  RunStatus status = RunStatus::Ok;
  std::string error;
  std::map<std::string, double> metrics;
  int threads = 1;
  std::string revision = "abc1234";
  std::uint64_t base_seed = 1;
  int ranks_per_run = 1;  // in the spec only above 1, as a sweep writes it
  // Spec extras, as the run side writes them only when set: keys added to spec.train
  // (flops, seconds, target), spec.model.match; and provenance keys (device_name, cpu).
  nlohmann::json train = nlohmann::json::object();
  nlohmann::json match;  // null: no size match
  nlohmann::json streams;  // null: every stream follows the seed ([sweep] vary / fixed otherwise)
  nlohmann::json provenance = nlohmann::json::object();
};

RunRecord make_run(const RunDraft& d);
// Writes DIR/runs/<key>.h5 and returns the record.
RunRecord write_run(const std::filesystem::path& dir, const RunDraft& d);

// The folder the report tests share:
//   listops, seq_len 64, accuracy:
//     transformer (dim=16)   seeds 0 1 2 ok
//     linear                 seeds 0 1 ok, seed 2 failed ("non-finite loss at step 3")
//     bigbird                seed 0 ok (n = 1), seed 1 stopped; runs with 2 threads (the rest 1)
//   text, seq_len 128 256 512 1024, accuracy, seeds 0 1, with efficiency figures:
//     transformer: peak_bytes ∝ N², step time ∝ N²; linear: both ∝ N (plus ±1 % noise)
void write_report_fixture(const std::filesystem::path& dir);

// Accuracy against training FLOPs on listops, seeds 0..3, steps without a budget (the fronts):
//   linear      acc 0.70 ± 0.002   flops 1e12 (exact)   on the front
//   longformer  linear's values on every seed: a tie, on the front too
//   bigbird     acc 0.75 ± 0.002   flops 8e12           better but costlier: on the front
//   transformer acc 0.60 ± 0.002   flops 4e12           clearly dominated
//   maelre      acc 0.65 ± 0.002   flops 2e12, seeds 0 1 ok, 2 failed, 3 stopped: dominated (2 pairs)
//   mvit        acc 0.69 ± 0.03    flops 1.5e12         dominated in the means only
// eval_loss = 1 − accuracy on every run (lower is better: the same front).
std::vector<RunRecord> front_runs();

// Runs with target = {eval_accuracy, 0.7} (target_step, and FLOPs = step × 1e9, seconds =
// step × 0.01 where reached), seeds 0..3 on `task`: steps[model][seed], 0 = never reached,
// -1 = failed, -2 = stopped.
std::vector<RunRecord> target_runs(const std::string& task, const std::map<std::string, std::vector<int>>& steps);

// target_runs on three tasks, seeds 0 and 1 (steps to the target; 0: never reached):
//   listops: linear 100, maelre 200, transformer never
//   text:    linear 300, maelre 150, transformer 150
//   image:   linear 400, maelre never, transformer 100
std::vector<RunRecord> three_task_target_runs();

// Writes each record as DIR/runs/<key>.h5.
void write_runs(const std::filesystem::path& dir, const std::vector<RunRecord>& runs);

// fashion-mnist sret, seeds 0..3, evaluated as trained and in three variants (full,
// merge-dup, merge-zero) at batch sizes 1 and 16 with probes: as trained 0.80 + 0.02 s;
// dup 0.015 below it; zero 0.05 below it (±0.002); timing curves and probe pool1.
std::vector<RunRecord> variant_runs();

}  // namespace lrb::test
