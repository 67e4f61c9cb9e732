#include "suite/report/variance_sources.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "suite/config/run_streams.h"
#include "suite/core/text.h"
#include "suite/report/analysis.h"
#include "suite/report/table_cells.h"
#include "suite/report/text_format.h"

namespace lrb {

namespace {

using namespace table_cells;

// Each value's level of each factor: the streams' index columns, constant ones left out,
// identical ones merged.
struct Factors {
  std::vector<std::string> names;
  std::vector<std::vector<std::int64_t>> columns;  // per factor, the index of each value
};

Factors factors_of(const std::vector<std::int64_t>& replicates) {
  std::vector<std::vector<std::int64_t>> by_stream(kStreams.size());
  for (const std::int64_t r : replicates) {
    const StreamTuple t = tuple_of_replicate(r);
    for (std::size_t k = 0; k < kStreams.size(); ++k) by_stream[k].push_back(t[k]);
  }
  Factors f;
  for (std::size_t k = 0; k < kStreams.size(); ++k) {
    const auto& col = by_stream[k];
    if (std::all_of(col.begin(), col.end(), [&](std::int64_t x) { return x == col.front(); })) continue;
    const auto same = std::find(f.columns.begin(), f.columns.end(), col);
    if (same != f.columns.end()) {
      f.names[static_cast<std::size_t>(same - f.columns.begin())] += "+" + std::string(kStreams[k].name);
      continue;
    }
    f.names.emplace_back(kStreams[k].name);
    f.columns.push_back(col);
  }
  return f;
}

// "2 x 3": the levels of a term's factors.
std::string term_levels(const CrossedDesign& v, const stats::VarianceTerm& t) {
  std::string levels;
  for (const auto& f : t.factors) levels += (levels.empty() ? "" : " x ") + std::to_string(v.components->levels_of(f));
  return levels;
}

}  // namespace

std::optional<CrossedDesign> crossed_design(const std::vector<std::int64_t>& replicates, const std::vector<double>& values,
                                            double confidence) {
  const Factors f = factors_of(replicates);
  if (f.names.size() < 2) return std::nullopt;
  CrossedDesign out;
  out.factors = f.names;
  if (f.names.size() > 8) {
    out.why_not = "more than 8 factors";
    return out;
  }
  // Levels in ascending index order; each value's place in the crossing, the last factor fastest.
  std::vector<std::map<std::int64_t, std::int64_t>> level_of(f.names.size());
  std::int64_t combinations = 1;
  for (std::size_t i = 0; i < f.names.size(); ++i) {
    for (const auto x : f.columns[i]) level_of[i].emplace(x, 0);
    std::int64_t next = 0;
    for (auto& [x, level] : level_of[i]) level = next++;
    out.levels.push_back(next);
    combinations *= next;
  }
  std::vector<double> crossed(static_cast<std::size_t>(combinations), 0.0);
  std::vector<bool> seen(crossed.size(), false);
  for (std::size_t v = 0; v < values.size(); ++v) {
    std::int64_t at = 0;
    for (std::size_t i = 0; i < f.names.size(); ++i) at = at * out.levels[i] + level_of[i].at(f.columns[i][v]);
    seen[static_cast<std::size_t>(at)] = true;
    crossed[static_cast<std::size_t>(at)] = values[v];
  }
  const auto filled = static_cast<std::int64_t>(std::count(seen.begin(), seen.end(), true));
  if (filled != combinations || values.size() != crossed.size()) {
    out.why_not = fmt::format("not a complete crossing of {}: {} of its {} combinations have one value ({} values)",
                              join(f.names, " x "), filled, combinations, values.size());
    return out;
  }
  out.components = stats::crossed_variance_components(f.names, out.levels, crossed, confidence);
  return out;
}

std::optional<VarianceSources> variance_sources(const Cell& cell, std::size_t index, double confidence) {
  std::vector<std::int64_t> replicates;
  std::vector<double> values;
  replicates.reserve(cell.values.size());
  values.reserve(cell.values.size());
  for (const SeedValue& v : cell.values) {
    replicates.push_back(v.seed);
    values.push_back(v.value);
  }
  auto design = crossed_design(replicates, values, confidence);
  if (!design) return std::nullopt;
  VarianceSources out;
  static_cast<CrossedDesign&>(out) = std::move(*design);
  out.cell = index;
  return out;
}

bool factor_holds_stream(const std::string& factor, const std::string& stream) {
  return ("+" + factor + "+").find("+" + stream + "+") != std::string::npos;
}

std::vector<LeftOutSource> sources_left_out(const Analysis& a) {
  // Per (task, model) and stream, the largest share a crossed study found for it.
  std::map<std::pair<std::string, std::string>, std::map<std::string, std::pair<double, std::size_t>>> found;
  for (const auto& v : a.variance_sources) {
    if (!v.components) continue;
    const Cell& c = a.cells[v.cell].cell;
    auto& by_stream = found[{c.task, c.model}];
    for (const auto& s : kStreams) {
      double share = 0;
      for (const auto& t : v.components->terms) {
        if (t.factors.size() == v.factors.size()) continue;  // the residual
        for (const auto& f : t.factors)
          if (factor_holds_stream(f, std::string(s.name))) {
            share += t.share;
            break;
          }
      }
      auto& best = by_stream[std::string(s.name)];
      if (share > best.first) best = {share, v.cell};
    }
  }
  std::vector<LeftOutSource> out;
  if (found.empty()) return out;
  for (std::size_t i = 0; i < a.cells.size(); ++i) {
    const Cell& c = a.cells[i].cell;
    const auto it = found.find({c.task, c.model});
    if (it == found.end() || c.values.size() < 2) continue;
    const StreamTuple first = tuple_of_replicate(c.values.front().seed);
    for (std::size_t k = 0; k < kStreams.size(); ++k) {
      const bool held = std::all_of(c.values.begin(), c.values.end(),
                                    [&](const SeedValue& v) { return tuple_of_replicate(v.seed)[k] == first[k]; });
      const auto share = it->second.find(std::string(kStreams[k].name));
      if (held && share != it->second.end() && share->second.first >= kLeftOutShare)
        out.push_back({i, std::string(kStreams[k].name), share->second.first, share->second.second});
    }
  }
  return out;
}

std::vector<std::string> left_out_notes(const Analysis& a, const std::vector<std::size_t>& comparisons) {
  std::set<std::size_t> cells;
  for (const std::size_t k : comparisons) cells.insert({a.comparisons[k].a, a.comparisons[k].b});
  std::vector<std::string> notes;
  for (const auto& l : a.left_out) {
    if (!cells.count(l.cell)) continue;
    const Cell& c = a.cells[l.cell].cell;
    const Cell& study = a.cells[l.study_cell].cell;
    notes.push_back(fmt::format("{} {}: its runs held the {} stream at one index, which carries {:.0f} % of {}'s variance of {} where a "
                                "crossed study varied it ({}): the comparisons that read it leave that source out of their "
                                "intervals (vary it too: [sweep] vary)",
                                c.entrant, c.setting_shown(), l.stream, 100 * l.share, c.model, display_metric(c.metric),
                                study.entrant + (study.setting_label().empty() ? "" : " " + study.setting_label())));
  }
  return notes;
}

nlohmann::json variance_sources_json(const Analysis& a) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& v : a.variance_sources) {
    const Cell& c = a.cells[v.cell].cell;
    nlohmann::json j = {{"cell", v.cell}, {"task", c.task}, {"entrant", c.entrant}, {"setting", c.condition},
                        {"metric", display_metric(c.metric)}, {"factors", v.factors},
                        {"levels", v.levels}, {"why_not", v.why_not.empty() ? nlohmann::json() : nlohmann::json(v.why_not)}};
    if (v.components) {
      const auto& c = *v.components;
      j["total"] = c.total;
      j["confidence"] = c.confidence;
      j["terms"] = nlohmann::json::array();
      for (const auto& t : c.terms)
        j["terms"].push_back({{"source", join(t.factors, ":")}, {"residual", t.factors.size() == c.factors.size()}, {"df", t.df},
                              {"sum_sq", t.sum_sq}, {"mean_sq", t.mean_sq}, {"component", t.component},
                              {"interval", t.interval ? nlohmann::json({t.interval->first, t.interval->second}) : nlohmann::json()},
                              {"satterthwaite_df", t.interval ? nlohmann::json(t.satterthwaite_df) : nlohmann::json()},
                              {"share", t.share}, {"levels", term_levels(v, t)}});
    }
    out.push_back(std::move(j));
  }
  return out;
}

std::optional<Table> variance_table(const Analysis& a, const std::string& task) {
  Table tab;
  tab.id = "variance-" + slug(task);
  tab.task = task;
  tab.title = task + " — where the variance comes from: each varied stream's component";
  tab.columns = {"model", "setting", "source", "levels", "df", "variance", "sd", "95% CI (variance)", "share"};
  for (const auto& v : a.variance_sources) {
    const Cell& c = a.cells[v.cell].cell;
    if (c.task != task) continue;
    if (!v.components) {
      tab.rows.push_back({text(c.entrant), text(c.setting_shown()), text(join(v.factors, " x ")), text("–"), text("–"), text("–"),
                          text("–"), text("–"), text(v.why_not)});
      tab.row_keys.push_back(cell_key(v.cell));
      continue;
    }
    for (const auto& t : v.components->terms) {
      const bool residual = t.factors.size() == v.factors.size();
      const std::string levels = term_levels(v, t);
      TableCell ci = t.interval ? number(t.interval->first, "[" + format_value(t.interval->first) + ", " + format_value(t.interval->second) + "]")
                                : text("–");
      tab.rows.push_back({text(c.entrant), text(c.setting_shown()), text(residual ? "residual (" + join(t.factors, ":") + ")" : join(t.factors, ":")),
                          text(levels), count(static_cast<std::size_t>(t.df)), number(t.component, format_value(t.component)),
                          number(std::sqrt(std::max(0.0, t.component)), format_value(std::sqrt(std::max(0.0, t.component)))), ci,
                          number(t.share, fmt::format("{:.0f} %", 100 * t.share))});
      tab.row_keys.push_back(cell_key(v.cell));
    }
  }
  if (tab.rows.empty()) return std::nullopt;
  tab.notes.push_back("a cell's factors: its random streams whose indices differ among its runs ([sweep] vary), those that always "
                      "move together as one (data+dropout: both follow the seed); variance: the method-of-moments component of "
                      "the crossed random-effects design (equal to REML on balanced data where positive), negative estimates "
                      "shown as they are and counted as 0 in the shares; residual: the highest interaction, not told apart from "
                      "noise with one run per combination");
  tab.notes.push_back(fmt::format("95% CI: Satterthwaite's approximate χ² interval ({:.0f} %), none where the estimate is not "
                                  "positive; a component resting on few levels is known only roughly (levels)",
                                  a.options.bootstrap.confidence * 100));
  return tab;
}

}  // namespace lrb
