// HTML: one self-contained page that works offline (styles, data and script inline, plots
// inline SVG; nothing from elsewhere). Tables as the text sinks show them, marks as <sup>,
// failed and stopped counts in red, warnings first. The page is a place to work in: every
// table sorts by a click on a column, a filter bar narrows the tables by task, model and
// setting, and a row of a cell opens to its seeds' values (a dot plot with the mean and
// interval), a claim's row to its paired values by seed and how the verdict was reached
// (the report's data for them rides along as JSON: table.h's row keys). The same script
// counts the plots the browser laid out (data-plots-rendered on <body>) and the verdict cells
// inside the window (data-verdicts-visible), so a headless test can check every plot drew
// and every verdict shows. A point of an accuracy–cost front opens its cell's seeds in a box
// under the plot (plots.cpp puts a circle with the cell's key over each point).
#include <cmath>

#include <fmt/format.h>

#include "suite/core/version.h"
#include "suite/report/escape.h"
#include "suite/report/html_assets.h"
#include "suite/report/plots.h"
#include "suite/report/sink_factories.h"

namespace lrb {
namespace {

// What the page's rows open to, from the report's data: each cell's values by seed with its
// mean, interval and chance level, and each claim whole (with its paired values).
nlohmann::json page_data(const nlohmann::json& data) {
  nlohmann::json out = {{"cells", nlohmann::json::array()}, {"claims", nlohmann::json::array()}};
  if (const auto cells = data.find("cells"); cells != data.end() && cells->is_array())
    for (const auto& c : *cells) {
      nlohmann::json values = nlohmann::json::array();
      for (const auto& v : c.value("values", nlohmann::json::array())) values.push_back({v.value("seed", 0), v.value("value", 0.0)});
      out["cells"].push_back({{"entrant", c.value("entrant", "")},
                              {"metric", c.value("metric", "")},
                              {"mean", c.value("mean", nlohmann::json())},
                              {"ci95", c.value("ci95", nlohmann::json())},
                              {"chance", c.value("chance", nlohmann::json())},
                              {"values", std::move(values)}});
    }
  if (const auto claims = data.find("claims"); claims != data.end() && claims->is_array()) out["claims"] = *claims;
  return out;
}

// JSON inside <script>: no '<' may close the element or open a comment.
std::string script_safe_json(const nlohmann::json& j) {
  const std::string text = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '<') out += "\\u003c";
    else out += c;
  }
  return out;
}

std::string number_attribute(double v) { return std::isfinite(v) ? fmt::format(" data-v=\"{:.17g}\"", v) : ""; }

// Longer texts (a claim's statement and source) wrap within their cell.
constexpr std::size_t kLongText = 48;

class HtmlSink final : public ReportSink {
 public:
  void write(const Report& report, std::ostream& out) override {
    const std::vector<Plot> plots = make_plots(report.data());
    out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        << "<title>" << html_escape(report.title) << "</title>\n<style>" << kHtmlPageStyle << "</style>\n</head>\n<body>\n";
    out << "<h1>" << html_escape(report.title) << "</h1>\n";
    out << "<p class=\"meta\">lrbench " << html_escape(lrbench_version()) << " (git " << html_escape(git_revision())
        << (git_dirty() ? ", dirty" : "") << ")</p>\n";
    if (!report.warnings.empty()) {
      out << "<section class=\"warnings\" id=\"warnings\">\n<h2>Warnings</h2>\n<ul>\n";
      for (const auto& w : report.warnings) out << "<li>" << html_escape(w) << "</li>\n";
      out << "</ul>\n</section>\n";
    }
    out << "<nav><ul>\n";
    for (const auto& t : report.tables) out << "<li><a href=\"#" << html_escape(t.id) << "\">" << html_escape(t.title) << "</a></li>\n";
    if (!plots.empty()) out << "<li><a href=\"#plots\">Plots</a></li>\n";
    out << "</ul></nav>\n";
    out << "<div class=\"filters\" id=\"lrb-filters\">filter: <label>task<input id=\"lrb-filter-task\" type=\"search\"></label>"
        << "<label>model<input id=\"lrb-filter-model\" type=\"search\"></label>"
        << "<label>setting<input id=\"lrb-filter-setting\" type=\"search\"></label>"
        << "<span class=\"meta\">a click on a column sorts it; a row marked ▸ opens to its seeds</span></div>\n";
    for (const auto& t : report.tables) table(t, out);
    if (!plots.empty()) {
      out << "<section id=\"plots\">\n<h2>Plots</h2>\n";
      for (const auto& p : plots) {
        out << "<figure class=\"plot\" id=\"" << html_escape(p.id) << "\" data-kind=\"" << html_escape(p.kind) << "\">\n"
            << p.svg << "\n<figcaption>" << html_escape(p.caption) << "</figcaption>\n</figure>\n";
      }
      out << "</section>\n";
    }
    out << "<script type=\"application/json\" id=\"lrb-data\">" << script_safe_json(page_data(report.data())) << "</script>\n";
    out << "<script>" << kHtmlPageScript << kHtmlCheckScript << "</script>\n</body>\n</html>\n";
  }

 private:
  static void table(const Table& t, std::ostream& out) {
    out << "<section>\n<table class=\"lrb\" id=\"" << html_escape(t.id) << "\""
        << (t.task.empty() ? "" : " data-task=\"" + html_escape(t.task) + "\"") << ">\n<caption>" << html_escape(t.title)
        << "</caption>\n<thead><tr>";
    std::vector<bool> numeric(t.columns.size());
    for (std::size_t c = 0; c < t.columns.size(); ++c) {
      numeric[c] = numeric_column(t, c);
      out << "<th" << (numeric[c] ? " class=\"num\"" : "") << ">" << html_escape(t.columns[c]) << "</th>";
    }
    out << "</tr></thead>\n<tbody>\n";
    const bool keyed = t.row_keys.size() == t.rows.size();
    for (std::size_t r = 0; r < t.rows.size(); ++r) {
      const auto& row = t.rows[r];
      out << (keyed && !t.row_keys[r].empty() ? "<tr data-key=\"" + html_escape(t.row_keys[r]) + "\">" : std::string("<tr>"));
      for (std::size_t c = 0; c < row.size(); ++c) {
        const TableCell& cell = row[c];
        std::string cls = c < numeric.size() && numeric[c] ? "num" : "";
        if (c < t.columns.size() && t.columns[c] == "verdict") cls += " verdict";
        if (cell.text.size() > kLongText) cls += " long";  // wraps instead of widening the table
        if (cell.best) cls += " best";
        if (cell.alert) cls += " alert";
        out << "<td" << (cls.empty() ? "" : " class=\"" + cls + "\"") << (cell.value ? number_attribute(*cell.value) : "") << ">"
            << html_escape(cell.text);
        if (cell.best) out << "<sup class=\"best\">" << kBestMark << "</sup>";
        if (cell.marked) out << "<sup class=\"sig\" title=\"significant\">" << kSignificantMark << "</sup>";
        if (cell.caution) out << "<sup class=\"caution\" title=\"small n\">" << kCautionMark << "</sup>";
        out << "</td>";
      }
      out << "</tr>\n";
    }
    out << "</tbody>\n</table>\n";
    if (!t.notes.empty()) {
      out << "<ul class=\"notes\">\n";
      for (const auto& n : t.notes) out << "<li>" << html_escape(n) << "</li>\n";
      out << "</ul>\n";
    }
    out << "</section>\n";
  }
};

ReportFormat html_format() {
  return {"html", {".html", ".htm"}, "one self-contained page: the tables and gnuplot plots inlined as SVG",
          [](bool) { return std::unique_ptr<ReportSink>(std::make_unique<HtmlSink>()); }};
}

}  // namespace

LRB_REGISTER_REPORT_FORMAT(60, html_format());

}  // namespace lrb
