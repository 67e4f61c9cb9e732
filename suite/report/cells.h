#pragma once
// From run records to table cells: one cell per (task, model, setting) over its seeds.
// The setting is what varies between the runs of a task (seq_len, model options, train
// options); the seed index is what a cell aggregates over.
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "suite/store/run_record.h"

namespace lrb {

struct SeedValue {
  std::int64_t seed = 0;
  double value = 0;
  std::string run;  // run key
};

struct Cell {
  std::string task;
  std::string model;
  nlohmann::json setting = nlohmann::json::object();  // varying path -> value
  std::string setting_label;                          // "seq_len=256 attention=linear"
  std::vector<SeedValue> values;                      // ok runs, by seed
  int failed = 0, stopped = 0;
  std::vector<std::string> problems;  // "seed 1: memory budget exceeded ..." for failed/stopped runs
  std::set<int> threads;
  std::set<std::string> revisions, devices;
};

// The metric to show: `metric` if given, else each task's primary metric (eval_<first>).
std::vector<Cell> group_cells(const std::vector<RunRecord>& runs, const std::string& metric);
// A metric where smaller is better (losses, times, bytes).
bool lower_is_better(const std::string& metric);
std::string metric_of(const std::vector<RunRecord>& runs, const std::string& task, const std::string& requested);

}  // namespace lrb
