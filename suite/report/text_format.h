#pragma once
// How numbers read in the tables. Machine-readable sinks keep the raw doubles; these only
// shape the text a person reads.
#include <optional>
#include <string>

#include "suite/stats/sample_stats.h"

namespace lrb {

std::string format_value(double v);                       // 0.6250, 1.234e+05, 3.2e-04
std::string format_interval(const stats::Interval& i);    // [0.6100, 0.6400]
std::string format_p(double p);                           // 0.0123, <0.001
std::string format_bytes(double bytes);                   // 1.50 GiB
std::string format_seconds(double seconds);               // 12.3 ms
std::string format_count(double v);                       // 1.2M, 3.40G (FLOPs, parameters)
std::string format_rate(double per_second);               // 1234/s, 1.2k/s
std::string format_signed(double v);                      // +0.0125, -0.0030

}  // namespace lrb
