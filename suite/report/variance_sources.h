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

// Values keyed by their replicates (run_streams.h) as a crossed design: the streams whose
// indices differ among them are its factors.
struct CrossedDesign {
  std::vector<std::string> factors;  // "order", "init", "data+dropout"
  std::vector<std::int64_t> levels;
  std::optional<stats::VarianceComponents> components;
  std::string why_not;  // the values do not cross the factors completely, once each
};
// Whether a design's factor holds a stream: "data+dropout" (streams varied together) holds
// dropout.
bool factor_holds_stream(const std::string& factor, const std::string& stream);

// Nothing when fewer than two factors vary (plain seeds: every stream moves with the seed).
std::optional<CrossedDesign> crossed_design(const std::vector<std::int64_t>& replicates, const std::vector<double>& values,
                                            double confidence);

struct VarianceSources : CrossedDesign {
  std::size_t cell = 0;  // index into Analysis::cells
};

// A source a cell held at one index (its runs' stream `stream` never moved) while a crossed
// study of the same task and model found it to carry `share` of the variance (the terms that
// involve it, the residual left out): the cell's spread, and the intervals of comparisons
// that read it, leave that source out.
struct LeftOutSource {
  std::size_t cell = 0;        // the cell that held it
  std::string stream;
  double share = 0;
  std::size_t study_cell = 0;  // the crossed study's cell that measured the share
};
// Noted from this share on.
inline constexpr double kLeftOutShare = 0.10;

// For a cell of two or more factors; nothing for a cell whose runs vary one seed.
std::optional<VarianceSources> variance_sources(const Cell& cell, std::size_t index, double confidence);

// Every source each cell held while a study of its task and model found it to matter.
std::vector<LeftOutSource> sources_left_out(const Analysis& a);
// The comparisons table's notes on the cells its comparisons read.
std::vector<std::string> left_out_notes(const Analysis& a, const std::vector<std::size_t>& comparisons);

// results/REPORT_SCHEMA.md, "variance_sources".
nlohmann::json variance_sources_json(const Analysis& a);
std::optional<Table> variance_table(const Analysis& a, const std::string& task);

}  // namespace lrb
