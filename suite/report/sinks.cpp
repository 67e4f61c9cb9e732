#include "suite/report/sinks.h"

#include <algorithm>

#include "suite/core/errors.h"
#include "suite/core/text.h"
#include "suite/report/escape.h"
#include "suite/report/sink_factories.h"

namespace lrb {

bool numeric_column(const Table& t, std::size_t c) {
  for (const auto& row : t.rows)
    if (c < row.size() && row[c].value) return true;
  return false;
}

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

std::string rtrim(std::string s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

std::string marks(const TableCell& cell) {
  std::string s;
  if (cell.best) s += std::string(" ") + kBestMark;
  if (cell.marked) s += std::string(" ") + kSignificantMark;
  if (cell.caution) s += std::string(" ") + kCautionMark;
  return s;
}

// Control characters from a results file (an error text, say) must not reach a terminal.
std::string printable(const std::string& s) {
  std::string o;
  for (char c : s) o += (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) ? ' ' : c;
  return o;
}

class TerminalSink final : public ReportSink {
 public:
  explicit TerminalSink(bool colour) : colour_(colour) {}
  void write(const Report& report, std::ostream& out) override {
    if (!report.title.empty()) out << printable(report.title) << "\n\n";
    for (const auto& t : report.tables) {
      out << printable(t.title) << "\n";
      std::vector<std::size_t> w(t.columns.size());
      for (std::size_t c = 0; c < t.columns.size(); ++c) w[c] = width(t.columns[c]);
      for (const auto& row : t.rows)
        for (std::size_t c = 0; c < row.size() && c < w.size(); ++c)
          w[c] = std::max(w[c], width(printable(row[c].text) + marks(row[c])));
      std::vector<bool> right(t.columns.size());
      for (std::size_t c = 0; c < t.columns.size(); ++c) right[c] = numeric_column(t, c);
      std::string line;
      for (std::size_t c = 0; c < t.columns.size(); ++c) line += (c ? "  " : "") + pad(t.columns[c], w[c], right[c]);
      out << rtrim(line) << "\n";
      std::size_t total = 0;
      for (auto x : w) total += x;
      out << std::string(total + 2 * (w.empty() ? 0 : w.size() - 1), '-') << "\n";
      for (const auto& row : t.rows) {
        line.clear();
        for (std::size_t c = 0; c < row.size() && c < w.size(); ++c) {
          std::string s = pad(printable(row[c].text) + marks(row[c]), w[c], right[c]);
          if (colour_ && row[c].alert) s = "\033[31m" + s + "\033[0m";
          else if (colour_ && row[c].best) s = "\033[1m" + s + "\033[0m";
          line += (c ? "  " : "") + s;
        }
        out << rtrim(line) << "\n";
      }
      for (const auto& n : t.notes) out << "  " << printable(n) << "\n";
      out << "\n";
    }
    for (const auto& w : report.warnings)
      out << (colour_ ? "\033[33mwarning:\033[0m " : "warning: ") << printable(w) << "\n";
  }

 private:
  bool colour_;
};

class MarkdownSink final : public ReportSink {
 public:
  // Cells padded to their column's width, so the source reads as a table too.
  void write(const Report& report, std::ostream& out) override {
    if (!report.title.empty()) out << "# " << markdown_escape(report.title) << "\n\n";
    if (!report.warnings.empty()) {
      for (const auto& w : report.warnings) out << "> **warning:** " << markdown_escape(w) << "\n>\n";
      out << "\n";
    }
    for (const auto& t : report.tables) {
      out << "## " << markdown_escape(t.title) << "\n\n";
      std::vector<std::vector<std::string>> text;
      for (const auto& row : t.rows) {
        text.emplace_back();
        for (const auto& cell : row) {
          std::string s = markdown_escape(cell.text);
          if (cell.best) s = "**" + s + "**";
          if (cell.marked) s += std::string(" ") + kSignificantMark;
          if (cell.caution) s += std::string(" ") + kCautionMark;
          if (cell.alert) s = "⚠ " + s;
          text.back().push_back(std::move(s));
        }
      }
      std::vector<std::size_t> w(t.columns.size(), 3);
      std::vector<bool> right(t.columns.size());
      for (std::size_t c = 0; c < t.columns.size(); ++c) {
        w[c] = std::max(w[c], width(markdown_escape(t.columns[c])));
        right[c] = numeric_column(t, c);
      }
      for (const auto& row : text)
        for (std::size_t c = 0; c < row.size() && c < w.size(); ++c) w[c] = std::max(w[c], width(row[c]));
      out << "|";
      for (std::size_t c = 0; c < t.columns.size(); ++c) out << " " << pad(markdown_escape(t.columns[c]), w[c], right[c]) << " |";
      out << "\n|";
      for (std::size_t c = 0; c < t.columns.size(); ++c)
        out << " " << (right[c] ? std::string(w[c] - 1, '-') + ":" : std::string(w[c], '-')) << " |";
      out << "\n";
      for (const auto& row : text) {
        out << "|";
        for (std::size_t c = 0; c < row.size(); ++c) out << " " << pad(row[c], c < w.size() ? w[c] : 0, c < right.size() && right[c]) << " |";
        out << "\n";
      }
      out << "\n";
      for (const auto& n : t.notes) out << "- " << markdown_escape(n) << "\n";
      out << "- **bold**: best; ⚠: failed or stopped runs, or seeds without a pair\n\n";
    }
  }
};

}  // namespace

std::unique_ptr<ReportSink> make_terminal_sink(bool colour) { return std::make_unique<TerminalSink>(colour); }
std::unique_ptr<ReportSink> make_markdown_sink() { return std::make_unique<MarkdownSink>(); }

std::vector<std::string> report_formats() { return {"term", "md", "csv", "tex", "json", "html"}; }

std::unique_ptr<ReportSink> make_report_sink(const std::string& format, bool colour) {
  if (format == "term") return make_terminal_sink(colour);
  if (format == "md") return make_markdown_sink();
  if (format == "csv") return make_csv_sink();
  if (format == "tex") return make_latex_sink();
  if (format == "json") return make_json_sink();
  if (format == "html") return make_html_sink();
  throw UserError("unknown report format '" + format + "'" + suggestion(format, report_formats()));
}

}  // namespace lrb
