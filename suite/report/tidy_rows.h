#pragma once
// `lrbench export`: the runs of one or more results folders as tidy data, one row per run
// and figure, for pandas and R (docs/results.md, "Results in pandas"). The columns:
//
//   run_key, sweep, status, error, task, model, seed, base_seed, device, ranks_per_run,
//   <every setting, by its flattened path: task.seq_len, model.attention, train.lr, ...>,
//   figure, value, unit, direction,
//   git_revision, git_dirty, device_name, gpu_name, threads, world_size
//
// A run that recorded no figure (one that failed before its first) is one row with figure
// and value empty; a bad file is a row of status "unreadable" and a combination the sweep
// skipped a row of status "skipped", each with its reason in `error`: nothing a report
// shows is left out. A figure's unit and direction come from the figure catalogue
// (suite/contracts/figures.h), which knows what the run files recorded. Rows are in run-key
// order, each run's figures by name; a setting a run does not have is empty (CSV) or absent
// (JSON Lines).
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "suite/report/report_input.h"

namespace lrb {

enum class TidyFormat { Csv, Jsonl };

// "csv", "jsonl"; nothing for another name.
std::optional<TidyFormat> tidy_format_from_name(std::string_view name);
// The format a file name's extension names (".csv", ".jsonl"), nothing for another.
std::optional<TidyFormat> tidy_format_for_file(const std::string& file);

// Writes the rows; returns how many (the header not counted).
std::size_t write_tidy_rows(const ReportInput& input, TidyFormat format, std::ostream& out);

}  // namespace lrb
