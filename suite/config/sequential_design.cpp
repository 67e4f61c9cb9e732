#include "suite/config/sequential_design.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "suite/core/errors.h"

namespace lrb {

std::vector<std::int64_t> SequentialSeeds::look_seeds() const {
  std::vector<std::int64_t> n;
  for (std::int64_t k = first; k < max; k += step) n.push_back(k);
  n.push_back(max);
  return n;
}

nlohmann::json SequentialSeeds::to_json() const { return {{"first", first}, {"step", step}, {"max", max}}; }

SequentialSeeds SequentialSeeds::from_json(const nlohmann::json& j) {
  SequentialSeeds s;
  try {
    s.first = j.at("first").get<std::int64_t>();
    s.step = j.at("step").get<std::int64_t>();
    s.max = j.at("max").get<std::int64_t>();
  } catch (const nlohmann::json::exception& e) {
    throw UserError(std::string("a sequential design needs integers first, step and max: ") + e.what());
  }
  if (s.first < 2 || s.step < 1 || s.max < s.first)
    throw UserError(fmt::format("a sequential design needs first >= 2, step >= 1 and max >= first, not {}", s.text()));
  if (s.looks() > kMaxLooks) throw UserError(fmt::format("a sequential design takes at most {} looks, not {}", kMaxLooks, s.looks()));
  return s;
}

std::string SequentialSeeds::text() const { return fmt::format("first {}, step {}, max {}", first, step, max); }

std::optional<double> parse_budget(const std::string& text, std::string& problem) {
  static const char* kForm = "write a wall time such as \"3h\", \"90m\", \"1h30m\", \"45s\" or \"2d\"";
  if (text.empty()) {
    problem = std::string("is empty: ") + kForm;
    return std::nullopt;
  }
  double total = 0;
  std::size_t i = 0;
  std::string last_unit;
  while (i < text.size()) {
    std::size_t start = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    if (i == start || i - start > 9) {
      problem = "'" + text + "' is not a budget: " + kForm;
      return std::nullopt;
    }
    const double count = std::stod(text.substr(start, i - start));
    start = i;
    while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
    const std::string unit = text.substr(start, i - start);
    double seconds = 0;
    if (unit == "d") seconds = 86400;
    else if (unit == "h") seconds = 3600;
    else if (unit == "m" || unit == "min") seconds = 60;
    else if (unit == "s") seconds = 1;
    else {
      problem = "'" + text + "': " + (unit.empty() ? "a number needs its unit (d, h, m or s)" : "unknown unit '" + unit + "'") + "; " + kForm;
      return std::nullopt;
    }
    if (!last_unit.empty() && unit == last_unit) {
      problem = "'" + text + "' gives the unit '" + unit + "' twice; " + kForm;
      return std::nullopt;
    }
    last_unit = unit;
    total += count * seconds;
  }
  if (!(total > 0)) {
    problem = "'" + text + "' is no time at all: a budget must be positive";
    return std::nullopt;
  }
  if (total > kMaxBudgetSeconds) {
    problem = "'" + text + "' is more than a year: give at most \"365d\"";
    return std::nullopt;
  }
  return total;
}

std::string format_budget(double seconds) {
  auto s = static_cast<std::int64_t>(std::llround(seconds));
  std::string out;
  for (const auto& [unit, size] : {std::pair{"d", 86400}, {"h", 3600}, {"m", 60}, {"s", 1}}) {
    if (s >= size) {
      out += std::to_string(s / size) + unit;
      s %= size;
    }
  }
  return out.empty() ? "0s" : out;
}

const char* wave_end_name(WavePlan::End e) {
  switch (e) {
    case WavePlan::End::Running: return "running";
    case WavePlan::End::AllDecided: return "every claim decided";
    case WavePlan::End::MaxReached: return "max reached";
    case WavePlan::End::BudgetSpent: return "budget spent";
  }
  return "?";
}

WaveRun wave_run(const nlohmann::json& spec, const std::vector<ClaimSpec>& claims) {
  WaveRun w;
  w.seed = spec.at("seed_index").get<std::int64_t>();
  for (std::size_t c = 0; c < claims.size(); ++c)
    if (claims[c].a.matches(spec) || (!claims[c].b.match.empty() && claims[c].b.matches(spec))) w.claims.push_back(c);
  return w;
}

bool run_in_wave(const WaveRun& run, const SequentialSeeds& design, const std::vector<std::size_t>& open, std::int64_t seeds) {
  if (run.seed < design.first) return true;
  if (run.seed >= seeds) return false;
  for (std::size_t c : run.claims)
    if (std::find(open.begin(), open.end(), c) != open.end()) return true;
  return false;
}

}  // namespace lrb
