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

// fashion-mnist sret, seeds 0..3, evaluated as trained and in three variants (full,
// merge-dup, merge-zero) at batch sizes 1 and 16 with probes: as trained 0.80 + 0.02 s;
// dup 0.015 below it; zero 0.05 below it (±0.002); timing curves and probe pool1.
std::vector<RunRecord> variant_runs();

}  // namespace lrb::test
