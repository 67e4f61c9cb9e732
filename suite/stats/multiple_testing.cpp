#include "suite/stats/multiple_testing.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "suite/core/errors.h"

namespace lrb::stats {

namespace {

std::vector<std::size_t> ascending_order(const std::vector<double>& p) {
  for (double v : p) {
    if (!(v >= 0.0 && v <= 1.0)) throw UserError("p-value " + std::to_string(v) + " is outside [0, 1]");
  }
  std::vector<std::size_t> order(p.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  // Equal p-values get equal adjusted values whatever their order, so stability is cosmetic.
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return p[a] < p[b]; });
  return order;
}

}  // namespace

std::vector<double> holm(const std::vector<double>& p) {
  const auto order = ascending_order(p);
  const std::size_t m = p.size();
  std::vector<double> out(m);
  double running = 0.0;
  for (std::size_t k = 0; k < m; ++k) {
    running = std::max(running, p[order[k]] * static_cast<double>(m - k));
    out[order[k]] = std::min(running, 1.0);
  }
  return out;
}

std::vector<double> benjamini_hochberg(const std::vector<double>& p) {
  const auto order = ascending_order(p);
  const std::size_t m = p.size();
  std::vector<double> out(m);
  double running = 1.0;  // values above 1 are capped anyway
  for (std::size_t k = m; k-- > 0;) {
    // statsmodels divides by the ecdf factor (k+1)/m; keep its rounding.
    const double ecdf = static_cast<double>(k + 1) / static_cast<double>(m);
    running = std::min(running, p[order[k]] / ecdf);
    out[order[k]] = running;
  }
  return out;
}

std::vector<double> adjust(const std::vector<double>& p, Correction correction) {
  switch (correction) {
    case Correction::kHolm: return holm(p);
    case Correction::kBenjaminiHochberg: return benjamini_hochberg(p);
    case Correction::kNone: ascending_order(p); return p;  // validation only
  }
  LRB_CHECK(false, "unknown correction");
}

std::vector<std::optional<double>> adjust(const std::vector<std::optional<double>>& p, Correction correction) {
  std::vector<double> defined;
  for (const auto& v : p) {
    if (v) defined.push_back(*v);
  }
  const std::vector<double> adjusted = adjust(defined, correction);
  std::vector<std::optional<double>> out(p.size());
  std::size_t k = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (p[i]) out[i] = adjusted[k++];
  }
  return out;
}

const char* correction_name(Correction correction) {
  switch (correction) {
    case Correction::kNone: return "none";
    case Correction::kHolm: return "holm";
    case Correction::kBenjaminiHochberg: return "fdr_bh";
  }
  return "?";
}

}  // namespace lrb::stats
