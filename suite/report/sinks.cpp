#include "suite/report/sinks.h"

#include <algorithm>

#include "suite/core/errors.h"
#include "suite/core/text.h"

namespace lrb {
namespace {

// Display width of UTF-8 text (± and similar count as one column).
std::size_t width(const std::string& s) {
  std::size_t w = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++w;
  return w;
}

std::string pad(const std::string& s, std::size_t w, bool right) {
  const std::size_t n = width(s);
  if (n >= w) return s;
  return right ? std::string(w - n, ' ') + s : s + std::string(w - n, ' ');
}

bool numeric_column(const Table& t, std::size_t c) {
  for (const auto& row : t.rows)
    if (c < row.size() && row[c].value) return true;
  return false;
}

std::string cell_text(const TableCell& cell) {
  std::string s = cell.text;
  if (cell.best) s += " *";
  if (cell.marked) s += " †";
  return s;
}

class TerminalSink final : public ReportSink {
 public:
  explicit TerminalSink(bool colour) : colour_(colour) {}
  void write(const Report& report, std::ostream& out) override {
    if (!report.title.empty()) out << report.title << "\n\n";
    for (const auto& t : report.tables) {
      out << t.title << "\n";
      std::vector<std::size_t> w(t.columns.size());
      for (std::size_t c = 0; c < t.columns.size(); ++c) w[c] = width(t.columns[c]);
      for (const auto& row : t.rows)
        for (std::size_t c = 0; c < row.size() && c < w.size(); ++c) w[c] = std::max(w[c], width(cell_text(row[c])));
      std::vector<bool> right(t.columns.size());
      for (std::size_t c = 0; c < t.columns.size(); ++c) right[c] = numeric_column(t, c);
      std::string line;
      for (std::size_t c = 0; c < t.columns.size(); ++c) line += (c ? "  " : "") + pad(t.columns[c], w[c], right[c]);
      out << line << "\n";
      std::size_t total = 0;
      for (auto x : w) total += x;
      out << std::string(total + 2 * (w.empty() ? 0 : w.size() - 1), '-') << "\n";
      for (const auto& row : t.rows) {
        line.clear();
        for (std::size_t c = 0; c < row.size() && c < w.size(); ++c) {
          std::string s = pad(cell_text(row[c]), w[c], right[c]);
          if (colour_ && row[c].alert) s = "\033[31m" + s + "\033[0m";
          else if (colour_ && row[c].best) s = "\033[1m" + s + "\033[0m";
          line += (c ? "  " : "") + s;
        }
        out << line << "\n";
      }
      for (const auto& n : t.notes) out << "  " << n << "\n";
      out << "\n";
    }
    for (const auto& w : report.warnings) out << (colour_ ? "\033[33mwarning:\033[0m " : "warning: ") << w << "\n";
  }

 private:
  bool colour_;
};

std::string md_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '|') o += "\\|";
    else o += c;
  }
  return o;
}

class MarkdownSink final : public ReportSink {
 public:
  void write(const Report& report, std::ostream& out) override {
    if (!report.title.empty()) out << "# " << report.title << "\n\n";
    for (const auto& t : report.tables) {
      out << "## " << md_escape(t.title) << "\n\n|";
      for (const auto& c : t.columns) out << " " << md_escape(c) << " |";
      out << "\n|";
      for (std::size_t c = 0; c < t.columns.size(); ++c) out << (numeric_column(t, c) ? " ---: |" : " --- |");
      out << "\n";
      for (const auto& row : t.rows) {
        out << "|";
        for (const auto& cell : row) {
          std::string s = md_escape(cell.text);
          if (cell.best) s = "**" + s + "**";
          if (cell.marked) s += " †";
          out << " " << s << " |";
        }
        out << "\n";
      }
      out << "\n";
      for (const auto& n : t.notes) out << "- " << md_escape(n) << "\n";
      if (!t.notes.empty()) out << "\n";
    }
    for (const auto& w : report.warnings) out << "> **warning:** " << md_escape(w) << "\n\n";
  }
};

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) {
    if (c == '"') o += "\"\"";
    else o += c;
  }
  return o + "\"";
}

class CsvSink final : public ReportSink {
 public:
  // One row per table row; numbers unformatted (full precision) where the cell has one.
  void write(const Report& report, std::ostream& out) override {
    bool header_done = false;
    std::vector<std::string> header;
    for (const auto& t : report.tables) {
      if (!header_done || t.columns != header) {
        out << "table";
        for (const auto& c : t.columns) out << "," << csv_field(c);
        out << "\n";
        header = t.columns;
        header_done = true;
      }
      for (const auto& row : t.rows) {
        out << csv_field(t.title);
        for (const auto& cell : row) {
          out << ",";
          if (cell.value) out << nlohmann::json(*cell.value).dump();
          else out << csv_field(cell.text);
        }
        out << "\n";
      }
    }
  }
};

}  // namespace

std::vector<std::string> report_formats() { return {"term", "md", "csv"}; }

std::unique_ptr<ReportSink> make_report_sink(const std::string& format, bool colour) {
  if (format == "term") return std::make_unique<TerminalSink>(colour);
  if (format == "md") return std::make_unique<MarkdownSink>();
  if (format == "csv") return std::make_unique<CsvSink>();
  throw UserError("unknown report format '" + format + "'" + suggestion(format, report_formats()));
}

}  // namespace lrb
