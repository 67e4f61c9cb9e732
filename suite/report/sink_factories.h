#pragma once
// What the sinks share. Each sink's file registers its format (LRB_REGISTER_REPORT_FORMAT,
// sinks.h); make_report_sink (sinks.cpp) picks one by name.
#include <memory>

#include "suite/report/sinks.h"

namespace lrb {

// A column that holds numbers (right-aligned).
bool numeric_column(const Table& t, std::size_t column);

}  // namespace lrb
