#include "suite/report/claims/claim_sides.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "suite/contracts/figures.h"
#include "suite/report/cells.h"
#include "suite/stats/ratio.h"
#include "suite/store/run_view.h"

namespace lrb::claim_sides {

std::string over_name(const ClaimSpec& c) { return c.over.substr(c.over.rfind('.') + 1); }

double over_value(const RunRecord& r, const std::string& over) {
  return static_cast<double>(over == "task.seq_len" ? r.view().seq_len : r.view().batch_size.value_or(0));
}

SideRuns collect(const CellSelector& sel, const std::string& metric, const std::vector<RunRecord>& runs,
                 const std::string& over, std::int64_t seed_limit) {
  SideRuns s;
  for (const auto& r : runs) {
    if (!sel.matches(r.spec)) continue;
    if (r.view().seed_index.value_or(0) >= seed_limit) continue;
    ++s.found;
    if (r.status != RunStatus::Stopped) ++s.finished;
    const std::string at = (over.empty() ? std::string() : fmt::format("{}={:g} ", over.substr(over.rfind('.') + 1), over_value(r, over))) +
                           r.view().seed_label;
    if (r.status != RunStatus::Ok) {
      s.problems.push_back(at + " " + status_name(r.status) + (r.error.empty() ? "" : ": " + r.error));
      continue;
    }
    auto it = r.metrics.find(sel.metric_name(metric));
    if (it == r.metrics.end() || !std::isfinite(it->second)) {
      s.problems.push_back(at + ": no value of " + display_metric(metric));
      continue;
    }
    s.values.emplace_back(&r, it->second);
  }
  return s;
}

stats::SeedValues by_seed(const SideRuns& s) {
  stats::SeedValues v;
  for (const auto& [r, x] : s.values) v.emplace(r->view().replicate, x);
  return v;
}

bool paired_sides(ClaimResult& r, const std::vector<RunRecord>& runs, const char* unit) {
  const SideRuns a = collect(r.claim.a, r.claim.metric, runs, "");
  const SideRuns b = collect(r.claim.b, r.claim.metric, runs, "");
  const bool miss_a = side_missing(r, r.claim.a, a, "A", r.claim.a.expected_runs);
  const bool miss_b = side_missing(r, r.claim.b, b, "B", r.claim.b.expected_runs);
  if (miss_a || miss_b) return false;
  const stats::SeedValues va = by_seed(a), vb = by_seed(b);
  const stats::SeedPairing p = stats::pair_by_seed(va, vb);
  if (!p.only_a.empty() || !p.only_b.empty())
    r.notes.push_back(fmt::format("{} on one side only (not used): {} A, {} B", unit, p.only_a.size(), p.only_b.size()));
  r.seeds = p.seeds;
  for (auto seed : p.seeds) {
    r.a_values.push_back(va.at(seed));
    r.b_values.push_back(vb.at(seed));
  }
  return true;
}

bool side_missing(ClaimResult& r, const CellSelector& sel, const SideRuns& s, const char* name, std::size_t expected) {
  const std::string who = std::string(name) + " (" + sel.label + ")";
  for (const auto& p : s.problems) r.notes.push_back(who + ": " + p);
  if (expected > s.found)
    r.notes.push_back(fmt::format("{}: {} of {} run(s) not in the results (not run yet, or a damaged file)", who,
                                  expected - s.found, expected));
  if (!s.values.empty()) return false;
  r.verdict = Verdict::NotTested;
  r.why = who + " has no run with a value" +
          (s.found == 0 ? ": none of its runs is in the results" : fmt::format(" ({} run(s) without one; see the notes)", s.found));
  return true;
}

// Figures that are exact counts on CPU (the catalogue's exact_on_cpu: the counting
// allocator's bytes and the batch search built on them, parameters, analytic FLOPs) depend
// on shapes alone, never on the seed or the machine's load. One run of such a figure is the
// figure, with no sampling spread.
bool exact_figure(const std::string& metric, const std::vector<RunRecord>& runs, const CellSelector& a, const CellSelector& b) {
  const FigureDef* figure = find_figure(metric);
  if (!figure || !figure->exact_on_cpu) return false;
  for (const auto& r : runs)
    if ((a.matches(r.spec) || (!b.match.empty() && b.matches(r.spec))) && r.view().device != "cpu")
      return false;
  return true;
}

const char* const kExactNote = "an exact figure (a deterministic count on CPU, the same on every seed): one seed gives it";

bool same_on_every_seed(const std::vector<double>& values) {
  return std::all_of(values.begin(), values.end(), [&](double x) { return x == values.front(); });
}

const char* const kVaryingExactNote =
    "a figure the catalogue counts exactly, but its values differ across the seeds read: judged as a sampled figure";

const char* const kNoSpreadWhy =
    "the paired differences have no spread: on a sampled figure that is no evidence (ties on a few seeds); more seeds "
    "will show the spread";

void decide_region(ClaimResult& r, double lo, double hi, const std::optional<double>& min, const std::optional<double>& max) {
  const double a = min.value_or(-std::numeric_limits<double>::infinity());
  const double b = max.value_or(std::numeric_limits<double>::infinity());
  if (lo >= a && hi <= b) {
    r.verdict = Verdict::Supported;
    r.why = "the interval lies wholly in the claimed region";
  } else if (hi < a || lo > b) {
    r.verdict = Verdict::Refuted;
    r.why = "the interval lies wholly outside the claimed region";
  } else {
    r.verdict = Verdict::Inconclusive;
    r.why = "the interval straddles the claimed region's edge";
  }
}

double paired_threshold(const ClaimSpec& c, bool higher_is_better) {
  const double t = c.kind == ClaimKind::Better ? c.margin : -c.margin;
  return (higher_is_better ? t : -t) + 0.0;  // + 0.0: a zero threshold is +0, never -0
}

EdgeDecision decide_on_the_edge(const ClaimSpec& c, bool exact) {
  if (!exact) return {Verdict::Inconclusive, "every paired seed sits exactly at the threshold; more seeds will show the spread"};
  if (c.kind == ClaimKind::NotWorse)
    return {Verdict::Supported, "the exact difference sits at the margin: not worse by more than the margin"};
  return {Verdict::Refuted, "the exact difference equals the threshold: a tie is not better"};
}

RatioInterval ratio_interval(const std::vector<double>& a, const std::vector<double>& b, double critical) {
  // (Ratios the same on every seed go to Fieller's, which reads them as a point.)
  if (const auto log = stats::paired_log_ratio(a, b, critical); log && log->sd_log > 0) return {log->interval, log->ratio};
  return {stats::fieller_paired_ratio(a, b, critical), std::nullopt};
}

}  // namespace lrb::claim_sides
