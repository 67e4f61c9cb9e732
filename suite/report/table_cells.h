#pragma once
// The cells the table builders write (report_tables.cpp, cost_tables.cpp): text, numbers
// with the value behind them, counts, intervals, and the ids and row keys of table.h.
#include <cctype>
#include <optional>
#include <string>

#include "suite/contracts/figures.h"
#include "suite/report/table.h"
#include "suite/report/text_format.h"

namespace lrb::table_cells {

// A row's key for the report's data: cells[i] (table.h).
inline std::string cell_key(std::size_t i) { return "cell:" + std::to_string(i); }

// A name as part of a table id: letters, digits, '-' and '_' kept, the rest '-'.
inline std::string slug(const std::string& s) {
  std::string o;
  for (char c : s) o += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '-';
  return o;
}

inline TableCell text(std::string s) { return TableCell{std::move(s)}; }
inline TableCell number(double v, std::string s) { return TableCell{std::move(s), v}; }
inline TableCell count(std::size_t n, bool alert = false) {
  TableCell c{std::to_string(n), static_cast<double>(n)};
  c.alert = alert && n > 0;
  return c;
}
// An undefined statistic: "n=1" where one value left it undefined, else "–"; never a number.
inline TableCell interval(const std::optional<stats::Interval>& i, std::size_t n, bool caution = false) {
  if (!i) return text(n == 1 ? "n=1" : "–");
  TableCell c = number(i->lo, format_interval(*i));
  c.caution = caution;
  return c;
}

// A figure's direction as its catalogue entry gives it (suite/contracts/figures.h).
inline std::string direction_text(const std::string& metric) {
  switch (figure_direction(metric)) {
    case Direction::Higher: return "higher is better";
    case Direction::Lower: return "lower is better";
    case Direction::None: break;
  }
  return "no better side: ranked high first";
}

}  // namespace lrb::table_cells
