#pragma once
// The runs a claim reads, side by side: what both the fixed design (claims.cpp) and the
// sequential one (sequential_claims.cpp) judge. A side's values by seed, the runs that gave
// none and why, and whether the figure is an exact count.
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "suite/config/claim_spec.h"
#include "suite/report/claims/claims.h"
#include "suite/stats/paired.h"
#include "suite/store/run_record.h"

namespace lrb::claim_sides {

inline constexpr std::int64_t kAllSeeds = std::numeric_limits<std::int64_t>::max();

// The runs of one side of a claim: values by seed (or points), and what gave none.
struct SideRuns {
  std::vector<std::pair<const RunRecord*, double>> values;
  std::vector<std::string> problems;  // "seed 2 failed: out of memory"
  std::size_t found = 0;              // runs of the side in the results, any status
  std::size_t finished = 0;           // of them, ok or failed (a stopped run is still to finish)
};

// The side's runs with a seed index below `seed_limit`.
SideRuns collect(const CellSelector& sel, const std::string& metric, const std::vector<RunRecord>& runs,
                 const std::string& over, std::int64_t seed_limit = kAllSeeds);
stats::SeedValues by_seed(const SideRuns& s);

// Not tested when a side has no value; notes for runs without one and runs not found
// (`expected` runs of the side were to be there).
bool side_missing(ClaimResult& r, const CellSelector& sel, const SideRuns& s, const char* name, std::size_t expected);
// A's and B's values of the claim's metric paired by seed (by stream tuple for a crossed
// study: `unit` names which) into r.seeds, r.a_values and r.b_values, with a note on those
// only one side ran. False where a side is missing (side_missing's notes say why).
bool paired_sides(ClaimResult& r, const std::vector<RunRecord>& runs, const char* unit);

// Figures that are exact counts on CPU (the same on every seed): one run gives the figure.
bool exact_figure(const std::string& metric, const std::vector<RunRecord>& runs, const CellSelector& a, const CellSelector& b);
extern const char* const kExactNote;
// The catalogue's exact figure is taken as exact only when its values are equal on every
// seed read: otherwise it is judged as a sampled figure, with this note.
bool same_on_every_seed(const std::vector<double>& values);
extern const char* const kVaryingExactNote;
// Paired differences of a sampled figure without spread (ties on a few seeds) are no
// evidence: the claim stays inconclusive, whatever side of the threshold they sit on.
extern const char* const kNoSpreadWhy;

// Supported / refuted / inconclusive as [lo, hi] lies in, outside or across [min, max].
void decide_region(ClaimResult& r, double lo, double hi, const std::optional<double>& min, const std::optional<double>& max);

// A ratio claim's interval at a critical t, for the fixed and the sequential judge alike:
// the paired log-ratios' where every value is positive and the ratios are not all equal
// (`geometric_mean` set), else Fieller's (no interval when it is unbounded).
struct RatioInterval {
  std::optional<stats::Interval> interval;
  std::optional<double> geometric_mean;  // set when judged on the log scale
};
RatioInterval ratio_interval(const std::vector<double>& a, const std::vector<double>& b, double critical);

// The threshold Δ must beat (better: margin; not-worse: −margin), in the metric's direction.
double paired_threshold(const ClaimSpec& c, bool higher_is_better);

// An exact figure whose every paired difference sits exactly on the threshold (equal
// parameter counts; a byte count at the margin) decides by the claim's words: a tie is not
// "better" (refuted); a difference at the margin is "not worse by more than it" (supported).
// A sampled metric on the edge stays inconclusive: more seeds will show its spread.
struct EdgeDecision {
  Verdict verdict;
  std::string why;
};
EdgeDecision decide_on_the_edge(const ClaimSpec& c, bool exact);

std::string over_name(const ClaimSpec& c);  // "seq_len"
double over_value(const RunRecord& r, const std::string& over);

}  // namespace lrb::claim_sides
