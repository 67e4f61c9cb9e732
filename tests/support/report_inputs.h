#pragma once
// A report's input from runs in memory, and options that keep a test quick.
#include <utility>
#include <vector>

#include "suite/report/analysis.h"

namespace lrb::test {

inline ReportInput input_of(std::vector<RunRecord> runs) {
  ReportInput in;
  in.runs = std::move(runs);
  in.sources = {"fixture"};
  return in;
}

// 500 bootstrap resamples instead of 10,000.
inline ReportOptions fast_options() {
  ReportOptions o;
  o.bootstrap.resamples = 500;
  return o;
}

}  // namespace lrb::test
