#pragma once
// The HTML report's figures, drawn by gnuplot as SVG from the report's JSON document:
//   seeds    per task: every cell's per-seed values, its mean, t and BCa intervals
//   memory   per task: mean metric (t interval) against peak memory, one point per cell
//   scaling  per task and figure: peak memory / step time against N on log-log axes, with
//            each fit's line and slope (interval) in the key
//   pareto   per task with a front (pareto.h): mean metric against mean cost, intervals on
//            both axes, the front as a step line; fixed margins and ranges, so that each
//            point's place is known and a transparent circle over it (data-key "cell:N")
//            opens the cell's seeds in the page
//   profile  a cost-to-target leaderboard's performance profile: ρ(τ) per model
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lrb {

struct Plot {
  std::string id;       // "plot-3", unique in the page; every SVG id inside is prefixed with it
  std::string kind;     // "seeds", "memory", "scaling", "pareto", "profile"
  std::string task;
  std::string caption;  // plain text (the page escapes it)
  std::string svg;      // one <svg> element, ready to inline
};

// All plots the data supports, drawn by one gnuplot run. Empty when there is nothing to draw.
std::vector<Plot> make_plots(const nlohmann::json& report_data);

}  // namespace lrb
