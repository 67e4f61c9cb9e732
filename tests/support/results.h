#pragma once
// Reading a results folder in tests: every run file, validated, keyed by run key.
#include <chrono>
#include <filesystem>
#include <map>
#include <string>

#include "suite/store/run_record.h"

namespace lrb::test {

std::map<std::string, RunRecord> read_runs(const std::filesystem::path& dir);
// Expects the deterministic parts of two records (task metrics, losses, curves other than
// timing) to be bit-identical; returns a description of the first difference, or "".
std::string deterministic_difference(const RunRecord& a, const RunRecord& b);
// Waits (polling) until DIR/checkpoints holds a checkpoint: a run is under way and
// resumable. False when none appeared within `timeout`.
bool wait_for_checkpoint(const std::filesystem::path& results_dir, std::chrono::seconds timeout);

}  // namespace lrb::test
