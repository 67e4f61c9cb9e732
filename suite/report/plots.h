#pragma once
// The HTML report's figures, drawn by gnuplot as SVG from the report's JSON document:
//   seeds    per task: every cell's per-seed values, its mean, t and BCa intervals
//   memory   per task: mean metric (t interval) against peak memory, one point per cell
//   scaling  per task and figure: peak memory / step time against N on log-log axes, with
//            each fit's line and slope (interval) in the key
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lrb {

struct Plot {
  std::string id;       // "plot-3", unique in the page; every SVG id inside is prefixed with it
  std::string kind;     // "seeds", "memory", "scaling"
  std::string task;
  std::string caption;  // plain text (the page escapes it)
  std::string svg;      // one <svg> element, ready to inline
};

// All plots the data supports, drawn by one gnuplot run. Empty when there is nothing to draw.
std::vector<Plot> make_plots(const nlohmann::json& report_data);

}  // namespace lrb
