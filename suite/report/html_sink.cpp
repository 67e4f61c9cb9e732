// HTML: one self-contained page (no network: styles inline, plots inline SVG, no images or
// scripts from elsewhere). Tables as the text sinks show them, marks as <sup>, failed and
// stopped counts in red, warnings first. A short inline script counts the plots the browser
// laid out (data-plots-rendered on <body>) and the verdict cells inside the window
// (data-verdicts-visible), so a headless test can check every plot drew and every verdict shows.
#include "suite/core/version.h"
#include "suite/report/escape.h"
#include "suite/report/plots.h"
#include "suite/report/sink_factories.h"

namespace lrb {
namespace {

constexpr const char* kStyle = R"(
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2em auto;max-width:1400px;padding:0 1em;color:#222}
h1{font-size:1.5em}h2{font-size:1.15em;margin-top:2em}
table.lrb{border-collapse:collapse;font-size:0.9em;margin:0.5em 0}
table.lrb caption{text-align:left;font-weight:600;padding:0.3em 0}
table.lrb th,table.lrb td{padding:0.25em 0.7em;border-bottom:1px solid #ddd;white-space:nowrap}
table.lrb thead th{border-bottom:2px solid #444;text-align:left}
table.lrb td.num,table.lrb th.num{text-align:right;font-variant-numeric:tabular-nums}
td.long{white-space:normal;min-width:14em;max-width:30em}
td.best{font-weight:700}td.alert{color:#b00020;font-weight:600}
sup.sig{color:#b05000}sup.caution{color:#666}
ul.notes{font-size:0.85em;color:#444;margin-top:0.2em}
section.warnings{background:#fff6e0;border:1px solid #e0b050;padding:0.5em 1em;margin:1em 0}
figure.plot{margin:1em 0}figure.plot svg{max-width:100%;height:auto}
figcaption{font-size:0.85em;color:#444}
.meta{color:#666;font-size:0.85em}
)";

constexpr const char* kCheckScript = R"(<script>
(function(){var f=document.querySelectorAll('figure.plot'),ok=0;
for(var i=0;i<f.length;i++){var s=f[i].querySelector('svg');if(!s)continue;var b=s.getBBox();
if(b.width>0&&b.height>0&&s.querySelectorAll('path,use,text').length>0)ok++;}
document.body.setAttribute('data-plots',String(f.length));document.body.setAttribute('data-plots-rendered',String(ok));
var v=document.querySelectorAll('td.verdict'),seen=0;
for(var j=0;j<v.length;j++){var r=v[j].getBoundingClientRect();if(r.width>0&&r.right<=window.innerWidth)seen++;}
document.body.setAttribute('data-verdicts',String(v.length));document.body.setAttribute('data-verdicts-visible',String(seen));})();
</script>
)";

// Longer texts (a claim's statement and source) wrap within their cell.
constexpr std::size_t kLongText = 48;

class HtmlSink final : public ReportSink {
 public:
  void write(const Report& report, std::ostream& out) override {
    const std::vector<Plot> plots = make_plots(report.data());
    out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        << "<title>" << html_escape(report.title) << "</title>\n<style>" << kStyle << "</style>\n</head>\n<body>\n";
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
    for (const auto& t : report.tables) table(t, out);
    if (!plots.empty()) {
      out << "<section id=\"plots\">\n<h2>Plots</h2>\n";
      for (const auto& p : plots) {
        out << "<figure class=\"plot\" id=\"" << html_escape(p.id) << "\" data-kind=\"" << html_escape(p.kind) << "\">\n"
            << p.svg << "\n<figcaption>" << html_escape(p.caption) << "</figcaption>\n</figure>\n";
      }
      out << "</section>\n";
    }
    out << kCheckScript << "</body>\n</html>\n";
  }

 private:
  static void table(const Table& t, std::ostream& out) {
    out << "<section>\n<table class=\"lrb\" id=\"" << html_escape(t.id) << "\">\n<caption>" << html_escape(t.title)
        << "</caption>\n<thead><tr>";
    std::vector<bool> numeric(t.columns.size());
    for (std::size_t c = 0; c < t.columns.size(); ++c) {
      numeric[c] = numeric_column(t, c);
      out << "<th" << (numeric[c] ? " class=\"num\"" : "") << ">" << html_escape(t.columns[c]) << "</th>";
    }
    out << "</tr></thead>\n<tbody>\n";
    for (const auto& row : t.rows) {
      out << "<tr>";
      for (std::size_t c = 0; c < row.size(); ++c) {
        const TableCell& cell = row[c];
        std::string cls = c < numeric.size() && numeric[c] ? "num" : "";
        if (c < t.columns.size() && t.columns[c] == "verdict") cls += " verdict";
        if (cell.text.size() > kLongText) cls += " long";  // wraps instead of widening the table
        if (cell.best) cls += " best";
        if (cell.alert) cls += " alert";
        out << "<td" << (cls.empty() ? "" : " class=\"" + cls + "\"") << ">" << html_escape(cell.text);
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
