#pragma once
// Where a cell's variance comes from (issue: runs that vary random streams on their own,
// [sweep] vary). The factors of a cell are its streams whose indices differ among its runs,
// streams that always move together ("data+dropout", following one seed) counted as one; a
// cell of two or more factors whose runs cross them completely, once each, gets the variance
// components of that crossed design (suite/stats/variance_components.h) for its metric.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "suite/report/table.h"
#include "suite/stats/variance_components.h"

namespace lrb {

struct Analysis;
struct Cell;

struct VarianceSources {
  std::size_t cell = 0;              // index into Analysis::cells
  std::vector<std::string> factors;  // "order", "init", "data+dropout"
  std::vector<std::int64_t> levels;
  std::optional<stats::VarianceComponents> components;
  std::string why_not;  // the runs do not cross the factors completely, once each
};

// For a cell of two or more factors; nothing for a cell whose runs vary one seed.
std::optional<VarianceSources> variance_sources(const Cell& cell, std::size_t index, double confidence);

// results/REPORT_SCHEMA.md, "variance_sources".
nlohmann::json variance_sources_json(const Analysis& a);
std::optional<Table> variance_table(const Analysis& a, const std::string& task);

}  // namespace lrb
