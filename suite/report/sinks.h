#pragma once
// Report sinks: one Report, many formats (google/benchmark's reporter seam).
//   term  aligned text tables (colour when `colour`), notes, warnings
//   md    Markdown tables, best in bold, marks explained under each table
//   csv   one row per cell, comparison, failed/stopped run, scaling fit, overall rank (from Report::data)
//   tex   LaTeX booktabs tables (a fragment to \input; needs \usepackage{booktabs})
//   json  Report::data (results/REPORT_SCHEMA.md)
//   html  one self-contained page: the tables and gnuplot plots inlined as SVG
//
// Each sink's file registers its format, the way models and tasks register:
//
//   LRB_REGISTER_REPORT_FORMAT(40, latex_format());
//
// The number is the format's place in the listing (--format's help and choices, the
// suggestions of an error message): ascending, one per format. suite/report/ is compiled
// as objects into every program that links it (lrb_report, cmake/layers.cmake), so the
// linker never drops a registration.
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "suite/core/macros.h"
#include "suite/report/table.h"

namespace lrb {

class ReportSink {
 public:
  virtual ~ReportSink() = default;
  virtual void write(const Report& report, std::ostream& out) = 0;
};

struct ReportFormat {
  std::string name;                     // --format NAME
  std::vector<std::string> extensions;  // -o FILE with one of these (".md") picks the format
  std::string summary;                  // one line: what the output is
  // `colour`: the output is a terminal that shows colours (only term uses it).
  std::function<std::unique_ptr<ReportSink>(bool colour)> make;
};

// Adds a format at static initialisation (LRB_REGISTER_REPORT_FORMAT); a second format
// with the same name, extension or order is a bug (LRB_CHECK).
bool register_report_format(int order, ReportFormat format);
// Every registered format, in listing order.
const std::vector<ReportFormat>& report_format_entries();

// Throws UserError for an unknown format.
std::unique_ptr<ReportSink> make_report_sink(const std::string& format, bool colour = false);
// The names of report_format_entries(), in listing order.
std::vector<std::string> report_formats();
// The format an output file's extension picks ("out.html" -> "html"), or "" for none.
std::string report_format_for_file(const std::string& path);
// Every format's extensions, for a message: ".txt, .md, .csv, .json, .html, .htm, .tex".
std::string report_file_extensions();

}  // namespace lrb

#define LRB_REGISTER_REPORT_FORMAT(order, format)                         \
  static const bool LRB_CONCAT(lrb_report_format_registered_, __LINE__) = \
      ::lrb::register_report_format(order, format)
