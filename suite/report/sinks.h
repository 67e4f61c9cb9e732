#pragma once
// Report sinks: one Report, many formats (google/benchmark's reporter seam).
//   term  aligned text tables (colour when `colour`), notes, warnings
//   md    Markdown tables, best in bold, marks explained under each table
//   csv   one row per cell, comparison, failed/stopped run, scaling fit, overall rank (from Report::data)
//   tex   LaTeX booktabs tables (a fragment to \input; needs \usepackage{booktabs})
//   json  Report::data (results/REPORT_SCHEMA.md)
//   html  one self-contained page: the tables and gnuplot plots inlined as SVG
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "suite/report/table.h"

namespace lrb {

class ReportSink {
 public:
  virtual ~ReportSink() = default;
  virtual void write(const Report& report, std::ostream& out) = 0;
};

// Throws UserError for an unknown format.
std::unique_ptr<ReportSink> make_report_sink(const std::string& format, bool colour = false);
std::vector<std::string> report_formats();

}  // namespace lrb
