#pragma once
// A sequential study: `seeds = { first = 5, step = 5, max = 60 }` in [sweep]. Every cell runs
// seeds 0 .. first−1; then, at each look, the report's judge (suite/report/claims/sequential_claims.h)
// decides every claim it can from the finished runs, and only the cells of claims still
// open get the next `step` seeds, up to `max`. An optional `budget` bounds the study's wall
// time. The seeds a look reads are the first n_k seed indices, n_k = first, first + step, ...,
// max, so a look is a pure function of the run files, whatever ran ahead of it.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "suite/config/claim_spec.h"

namespace lrb {

// The most looks a design may take: each look's boundary integrates over all before it.
inline constexpr std::int64_t kMaxLooks = 200;

struct SequentialSeeds {
  std::int64_t first = 0, step = 0, max = 0;

  // n_1 < n_2 < ... < n_K = max: the seeds each look reads.
  std::vector<std::int64_t> look_seeds() const;
  std::int64_t looks() const { return 1 + (max - first + step - 1) / step; }
  nlohmann::json to_json() const;
  static SequentialSeeds from_json(const nlohmann::json& j);  // UserError on a bad document
  bool operator==(const SequentialSeeds& o) const { return first == o.first && step == o.step && max == o.max; }
  bool operator!=(const SequentialSeeds& o) const { return !(*this == o); }
  std::string text() const;  // "first 5, step 5, max 60"
};

// The largest budget a study may state: a year.
inline constexpr double kMaxBudgetSeconds = 365.0 * 24 * 3600;

// "3h", "90m", "1h30m", "45s", "2d", "1d12h": a wall time in seconds, or a UserError-ready
// message in `problem`.
std::optional<double> parse_budget(const std::string& text, std::string& problem);
std::string format_budget(double seconds);  // "3h", "1h30m", "45s"

// What the last look of a sequential study decided, for the scheduler: the claims still
// open and how far their cells' seeds must go. Made by the judge from the finished runs.
struct WavePlan {
  enum class End { Running, AllDecided, MaxReached, BudgetSpent };
  End end = End::Running;
  std::size_t looks_done = 0;           // looks evaluated so far (0 .. K)
  std::vector<std::size_t> open;        // indices into the claims of claims still open
  std::int64_t wave_seeds = 0;          // the current wave runs the open claims' cells to this many seeds (0: ended)
  std::int64_t next_wave_seeds = 0;     // the wave after it, if the current look decides nothing (0: none)
  std::string summary;                  // "look 2 of 12: 3 claims open, the wave runs to 15 seeds"
};
const char* wave_end_name(WavePlan::End e);  // "running", "every claim decided", "max reached", "budget spent"

// A run as a wave sees it: its seed index and the claims whose sides select it.
struct WaveRun {
  std::int64_t seed = 0;
  std::vector<std::size_t> claims;  // indices into the sweep's claims
};
WaveRun wave_run(const nlohmann::json& spec, const std::vector<ClaimSpec>& claims);

// Whether a sequential study draws the run when its open claims' cells run to `seeds`
// seeds: seeds below `first` for every cell, and up to `seeds` for a cell that feeds an
// open claim.
bool run_in_wave(const WaveRun& run, const SequentialSeeds& design, const std::vector<std::size_t>& open, std::int64_t seeds);

}  // namespace lrb
