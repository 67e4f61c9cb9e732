#pragma once
// The sinks, one file each; make_report_sink (sinks.cpp) picks one by name.
#include <memory>

#include "suite/report/sinks.h"

namespace lrb {

std::unique_ptr<ReportSink> make_terminal_sink(bool colour);
std::unique_ptr<ReportSink> make_markdown_sink();
std::unique_ptr<ReportSink> make_csv_sink();
std::unique_ptr<ReportSink> make_json_sink();
std::unique_ptr<ReportSink> make_latex_sink();
std::unique_ptr<ReportSink> make_html_sink();

// A column that holds numbers (right-aligned).
bool numeric_column(const Table& t, std::size_t column);

}  // namespace lrb
