#include "suite/report/text_format.h"

#include <fmt/format.h>

#include <cmath>

namespace lrb {

// Values that overflowed a double (a mean or spread of values near 1.8e308) or had none.
constexpr const char* kUndefined = "undefined (overflow or no value)";

std::string format_value(double v) {
  if (!std::isfinite(v)) return kUndefined;
  if (v == 0) return "0";
  if (std::fabs(v) >= 1e5 || std::fabs(v) < 1e-3) return fmt::format("{:.3e}", v);
  if (std::fabs(v) >= 100) return fmt::format("{:.1f}", v);
  return fmt::format("{:.4f}", v);
}

std::string format_interval(const stats::Interval& i) {
  if (!std::isfinite(i.lo) || !std::isfinite(i.hi)) return std::string("[") + kUndefined + "]";
  return "[" + format_value(i.lo) + ", " + format_value(i.hi) + "]";
}

std::string format_p(double p) {
  if (std::isnan(p)) return kUndefined;
  if (p < 0.001) return "<0.001";
  return fmt::format("{:.3f}", p);
}

namespace {
std::string scaled(double v, const char* const* units, int n_units, double base, const char* suffix) {
  if (!std::isfinite(v)) return kUndefined;
  int u = 0;
  double x = v;
  while (std::fabs(x) >= base && u + 1 < n_units) {
    x /= base;
    ++u;
  }
  const int decimals = std::fabs(x) >= 100 ? 0 : std::fabs(x) >= 10 ? 1 : 2;
  return fmt::format("{:.{}f}{}{}", x, u == 0 && std::floor(x) == x ? 0 : decimals, units[u], suffix);
}
}  // namespace

std::string format_bytes(double bytes) {
  static const char* const units[] = {" B", " KiB", " MiB", " GiB", " TiB", " PiB"};
  return scaled(bytes, units, 6, 1024.0, "");
}

std::string format_count(double v) {
  static const char* const units[] = {"", "k", "M", "G", "T", "P", "E"};
  return scaled(v, units, 7, 1000.0, "");
}

std::string format_rate(double per_second) {
  static const char* const units[] = {"", "k", "M", "G", "T"};
  return scaled(per_second, units, 5, 1000.0, "/s");
}

std::string format_seconds(double s) {
  if (!std::isfinite(s)) return kUndefined;
  if (s >= 1.0 || s == 0) return fmt::format("{:.3g} s", s);
  if (s >= 1e-3) return fmt::format("{:.3g} ms", s * 1e3);
  return fmt::format("{:.3g} µs", s * 1e6);
}

std::string format_signed(double v) {
  const std::string s = format_value(v);
  return v > 0 && std::isfinite(v) ? "+" + s : s;
}

}  // namespace lrb
