#pragma once
// The table model every report sink writes: terminal, Markdown, LaTeX and HTML render the
// same Tables; CSV and JSON write the same numbers from Report::data(). No sink computes.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lrb {

struct TableCell {
  std::string text;              // as shown
  std::optional<double> value;   // the number behind it, for machine-readable sinks
  bool best = false;             // best in its column (within its setting): bold / " *"
  bool marked = false;           // a significant difference: "†", explained in the legend
  bool alert = false;            // failed/stopped runs: never to be overlooked
  bool caution = false;          // shown, but not to be trusted (small n): "‡", explained in the legend
};

struct Table {
  std::string id;       // stable, unique in the report: "summary-listops" (HTML anchors, tooling)
  std::string title;
  std::vector<std::string> columns;
  std::vector<std::vector<TableCell>> rows;
  std::vector<std::string> notes;  // legend and remarks printed under the table
  std::string task;                // the task of every row; "" for a table across tasks
  // What each row stands for in the report's data (results/REPORT_SCHEMA.md): "cell:12" is
  // cells[12], "claim:3" claims[3]; empty, or one per row. The HTML page opens a row to it.
  std::vector<std::string> row_keys;
};

struct Report {
  std::string title;
  std::vector<Table> tables;
  std::vector<std::string> warnings;  // mixed revisions or threads, bad files, small n...
  // The same content for structured sinks (JSON, CSV, plots); results/REPORT_SCHEMA.md. Made
  // by make_data on first use: text sinks never read it, and at 100,000 runs (every seed's
  // values with their run keys) it would be most of a terminal report's time and memory.
  const nlohmann::json& data() const {
    if (!data_) data_ = make_data ? make_data() : nlohmann::json::object();
    return *data_;
  }
  std::function<nlohmann::json()> make_data;

 private:
  mutable std::optional<nlohmann::json> data_;
};

// Marks as they appear in text sinks; LaTeX and HTML use their own forms of the same marks.
inline constexpr const char* kBestMark = "*";
inline constexpr const char* kSignificantMark = "†";
inline constexpr const char* kCautionMark = "‡";

}  // namespace lrb
