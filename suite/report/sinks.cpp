#include "suite/report/sinks.h"

#include <algorithm>
#include <filesystem>
#include <utility>

#include "suite/core/errors.h"
#include "suite/core/ordered_registry.h"
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

ReportFormat terminal_format() {
  return {"term", {".txt"}, "aligned text tables (colour on a terminal), notes, warnings",
          [](bool colour) { return std::unique_ptr<ReportSink>(std::make_unique<TerminalSink>(colour)); }};
}

ReportFormat markdown_format() {
  return {"md", {".md"}, "Markdown tables, best in bold, marks explained under each table",
          [](bool) { return std::unique_ptr<ReportSink>(std::make_unique<MarkdownSink>()); }};
}

// Filled by the sinks' static registrations (before main), read after.
OrderedRegistry<ReportFormat>& registry() {
  static OrderedRegistry<ReportFormat> formats("report formats");
  return formats;
}

}  // namespace

LRB_REGISTER_REPORT_FORMAT(10, terminal_format());
LRB_REGISTER_REPORT_FORMAT(20, markdown_format());

bool register_report_format(int order, ReportFormat format) {
  registry().add(order, std::move(format), [](const ReportFormat& earlier, const ReportFormat& added) {
    for (const auto& e : added.extensions)
      LRB_CHECK(std::find(earlier.extensions.begin(), earlier.extensions.end(), e) == earlier.extensions.end(),
                "report formats '" + earlier.name + "' and '" + added.name + "' both claim the extension " + e);
  });
  return true;
}

const std::vector<ReportFormat>& report_format_entries() { return registry().entries(); }

std::vector<std::string> report_formats() {
  std::vector<std::string> names;
  for (const auto& f : report_format_entries()) names.push_back(f.name);
  return names;
}

std::unique_ptr<ReportSink> make_report_sink(const std::string& format, bool colour) {
  for (const auto& f : report_format_entries())
    if (f.name == format) return f.make(colour);
  throw UserError("unknown report format '" + format + "'" + suggestion(format, report_formats()));
}

std::string report_format_for_file(const std::string& path) {
  const std::string ext = std::filesystem::path(path).extension().string();
  for (const auto& f : report_format_entries())
    if (std::find(f.extensions.begin(), f.extensions.end(), ext) != f.extensions.end()) return f.name;
  return "";
}

std::string report_file_extensions() {
  std::string out;
  for (const auto& f : report_format_entries())
    for (const auto& e : f.extensions) out += (out.empty() ? "" : ", ") + e;
  return out;
}

}  // namespace lrb
