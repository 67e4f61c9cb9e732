#pragma once
// The table model every report sink writes: terminal, Markdown, CSV (and later LaTeX,
// HTML, JSON) render the same Report, never their own copies of the numbers.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lrb {

struct TableCell {
  std::string text;              // as shown
  std::optional<double> value;   // the number behind it, for machine-readable sinks
  bool best = false;             // best in its column
  bool marked = false;           // e.g. a significant difference; explained in the legend
  bool alert = false;            // failed/stopped runs: never to be overlooked
};

struct Table {
  std::string title;
  std::vector<std::string> columns;
  std::vector<std::vector<TableCell>> rows;
  std::vector<std::string> notes;  // legend and remarks printed under the table
};

struct Report {
  std::string title;
  std::vector<Table> tables;
  std::vector<std::string> warnings;  // mixed revisions or threads, bad files, small n...
  nlohmann::json data;                // the same content for structured sinks (JSON)
};

}  // namespace lrb
