#pragma once
// Report sinks: one Report, many formats (google/benchmark's reporter seam).
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

// "term" (aligned text; colour when `colour`), "md", "csv". Throws UserError otherwise.
std::unique_ptr<ReportSink> make_report_sink(const std::string& format, bool colour = false);
std::vector<std::string> report_formats();

}  // namespace lrb
