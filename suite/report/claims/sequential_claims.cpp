#include "suite/report/claims/sequential_claims.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <set>

#include "suite/core/errors.h"
#include "suite/report/cells.h"
#include "suite/report/claims/claim_sides.h"
#include "suite/stats/group_sequential.h"
#include "suite/stats/power.h"
#include "suite/stats/sample_stats.h"
#include "suite/stats/sequential_t.h"
#include "suite/stats/scaling_fit.h"

namespace lrb {

namespace {

using namespace claim_sides;

// Boundaries depend only on (level, fractions): studies without failures share them, and a
// report judges every look again from the start, one look more than the last time. Each
// entry keeps its builder, so a look extends its prefix's instead of starting over. Kept
// for the process, bounded.
stats::SpendingBoundary boundary_for(double level, const std::vector<double>& fractions, double spacing) {
  static std::mutex mutex;
  static std::map<std::string, stats::SpendingBoundaryBuilder> cache;
  auto key_of = [&](std::size_t n) {
    std::string key(sizeof(double) * (n + 2), '\0');
    std::memcpy(key.data(), &level, sizeof(double));
    std::memcpy(key.data() + sizeof(double), &spacing, sizeof(double));
    if (n) std::memcpy(key.data() + 2 * sizeof(double), fractions.data(), sizeof(double) * n);
    return key;
  };
  std::lock_guard<std::mutex> lock(mutex);
  const std::string key = key_of(fractions.size());
  if (auto it = cache.find(key); it != cache.end()) return it->second.boundary();
  if (cache.size() > 20000) cache.clear();
  auto prefix = fractions.empty() ? cache.end() : cache.find(key_of(fractions.size() - 1));
  stats::SpendingBoundaryBuilder b = prefix != cache.end() ? prefix->second : stats::SpendingBoundaryBuilder(level, spacing);
  for (std::size_t k = b.boundary().fractions.size(); k < fractions.size(); ++k) b.add(fractions[k]);
  return cache.emplace(key, std::move(b)).first->second.boundary();
}

// What one look reads of one claim.
struct LookData {
  bool complete = true;      // every run of the claim's sides below the look's seeds has finished
  bool exact = false;        // an exact figure: decided without sampling error
  std::size_t n = 0;         // pairs (better, not-worse, ratio) or points (scaling)
  std::size_t max_n = 0;     // what max seeds would give
  std::vector<double> a, b;  // paired values
  std::vector<double> x, y;  // scaling points
  std::vector<std::int64_t> seeds;
  ClaimResult scratch;       // notes, and not tested with its reason
  bool failed_side = false;  // a side whose finished runs all failed: more seeds will not help
};

std::size_t per_seed(const CellSelector& side, const SequentialSeeds& d) {
  return std::max<std::size_t>(1, side.expected_runs / static_cast<std::size_t>(d.max));
}

bool side_complete(const SideRuns& s, const CellSelector& side, const SequentialSeeds& d, std::int64_t seeds) {
  return s.finished >= per_seed(side, d) * static_cast<std::size_t>(seeds);
}

LookData look_data(const ClaimSpec& c, bool higher_is_better, const SequentialSeeds& d, const std::vector<RunRecord>& runs,
                   std::int64_t seeds) {
  LookData L;
  L.scratch.claim = c;
  L.scratch.higher_is_better = higher_is_better;
  L.scratch.verdict = Verdict::Inconclusive;
  const bool scaling = c.kind == ClaimKind::Scaling;
  const SideRuns a = collect(c.a, c.metric, runs, scaling ? c.over : "", seeds);
  L.complete = side_complete(a, c.a, d, seeds);
  const std::size_t expected_a = per_seed(c.a, d) * static_cast<std::size_t>(seeds);
  L.exact = exact_figure(c.metric, runs, c.a, c.b);
  if (scaling) {
    L.max_n = per_seed(c.a, d) * static_cast<std::size_t>(d.max);
    if (side_missing(L.scratch, c.a, a, "A", expected_a)) {
      L.failed_side = L.complete;
      return L;
    }
    std::map<double, std::set<double>> at_x;  // an exact figure has one value per x, on every seed
    for (const auto& [run, v] : a.values) at_x[over_value(*run, c.over)].insert(v);
    const bool varies = std::any_of(at_x.begin(), at_x.end(), [](const auto& e) { return e.second.size() > 1; });
    if (L.exact && varies) L.scratch.notes.push_back(kVaryingExactNote);
    L.exact = L.exact && !varies;
    std::set<std::pair<double, double>> seen;  // an exact figure repeats one point per seed
    for (const auto& [run, v] : a.values) {
      const double xv = over_value(*run, c.over);
      if (L.exact && !seen.insert({xv, v}).second) continue;
      L.x.push_back(xv);
      L.y.push_back(v);
    }
    L.n = L.x.size();
    return L;
  }
  const SideRuns b = collect(c.b, c.metric, runs, "", seeds);
  L.complete = L.complete && side_complete(b, c.b, d, seeds);
  L.max_n = static_cast<std::size_t>(d.max);
  const bool miss_a = side_missing(L.scratch, c.a, a, "A", expected_a);
  const bool miss_b = side_missing(L.scratch, c.b, b, "B", per_seed(c.b, d) * static_cast<std::size_t>(seeds));
  if (miss_a || miss_b) {
    L.failed_side = L.complete;
    return L;
  }
  const stats::SeedValues va = by_seed(a), vb = by_seed(b);
  const stats::SeedPairing p = stats::pair_by_seed(va, vb);
  if (!p.only_a.empty() || !p.only_b.empty())
    L.scratch.notes.push_back(fmt::format("seeds on one side only (not used): {} A, {} B", p.only_a.size(), p.only_b.size()));
  for (auto seed : p.seeds) {
    L.a.push_back(va.at(seed));
    L.b.push_back(vb.at(seed));
  }
  L.seeds = p.seeds;
  L.n = p.seeds.size();
  // A figure counts as exact only if its values are equal across the seeds read (a FLOP
  // count under a wall-time budget varies with the steps each run managed).
  const bool constant = same_on_every_seed(L.a) && same_on_every_seed(L.b);
  if (L.exact && !constant) L.scratch.notes.push_back(kVaryingExactNote);
  L.exact = L.exact && constant;
  return L;
}

// One test of one claim at one look, at a nominal two-sided level.
struct LookTest {
  std::optional<double> estimate;
  std::optional<stats::Interval> interval;
  std::optional<double> sd;  // of Δ (better, not-worse)
  bool log_ratio = false;    // ratio: judged on the paired log-ratios
  Verdict verdict = Verdict::Inconclusive;
  std::string why;
};

double critical(double nominal, double df) {
  if (!(nominal > 0)) return std::numeric_limits<double>::infinity();
  return stats::t_critical_two_sided(std::min(nominal, 0.999999), df);
}

// A better / not-worse claim at one look: the repeated t interval of the paired differences
// against the threshold.
LookTest test_paired_look(const ClaimSpec& c, bool higher_is_better, const LookData& L, double nominal) {
  LookTest t;
  std::vector<double> diff(L.n);
  for (std::size_t i = 0; i < L.n; ++i) diff[i] = L.a[i] - L.b[i];
  const double m = stats::mean(diff);
  t.estimate = m;
  const double sd = L.n >= 2 ? stats::sample_std(diff) : 0.0;
  t.sd = sd;
  const double half = sd == 0 ? 0.0 : critical(nominal, static_cast<double>(L.n - 1)) * sd / std::sqrt(static_cast<double>(L.n));
  t.interval = stats::Interval{m - half, m + half};
  const double thr = paired_threshold(c, higher_is_better);
  if (L.n >= 1 && std::all_of(diff.begin(), diff.end(), [thr](double d) { return d - thr == 0.0; })) {
    t.interval = stats::Interval{thr, thr};
    auto edge = decide_on_the_edge(c, L.exact);
    t.verdict = edge.verdict;
    t.why = std::move(edge.why);
    return t;
  }
  if (sd == 0 && !L.exact) {
    t.interval.reset();
    t.why = kNoSpreadWhy;
    return t;
  }
  // Strictly beyond the threshold: an interval touching it decides nothing.
  const bool above = t.interval->lo > thr, below = t.interval->hi < thr;
  if ((higher_is_better && above) || (!higher_is_better && below)) {
    t.verdict = Verdict::Supported;
    t.why = "the repeated interval lies wholly on the claimed side";
  } else if ((higher_is_better && below) || (!higher_is_better && above)) {
    t.verdict = Verdict::Refuted;
    t.why = "the repeated interval lies wholly on the other side";
  } else {
    t.why = "the repeated interval straddles the threshold";
  }
  return t;
}

// A ratio claim at one look: Fieller's interval of mean(A) / mean(B) (a point for an exact figure).
LookTest test_ratio_look(const ClaimSpec& c, const LookData& L, double nominal) {
  LookTest t;
  const double mb = stats::mean(L.b);
  if (mb == 0) {
    t.why = "mean(B) is 0: the ratio is undefined";
    return t;
  }
  t.estimate = stats::mean(L.a) / mb;
  const double crit = L.n >= 2 ? critical(nominal, static_cast<double>(L.n - 1)) : std::numeric_limits<double>::infinity();
  std::optional<stats::Interval> ci;
  if (L.exact && L.n >= 1) {
    ci = stats::Interval{*t.estimate, *t.estimate};
  } else {
    const RatioInterval judged = ratio_interval(L.a, L.b, crit);
    ci = judged.interval;
    t.log_ratio = judged.geometric_mean.has_value();
    if (judged.geometric_mean) t.estimate = judged.geometric_mean;
  }
  if (!ci) {
    t.why = "Fieller's interval is unbounded at this look's level (mean(B) is not yet clear of 0)";
    return t;
  }
  t.interval = ci;
  ClaimResult r;
  decide_region(r, ci->lo, ci->hi, c.at_least, c.at_most);
  t.verdict = r.verdict;
  t.why = r.why;
  return t;
}

// A scaling claim at one look: the log-log slope's t interval, widened to the look's level.
LookTest test_scaling_look(const ClaimSpec& c, const LookData& L, double nominal) {
  LookTest t;
  std::set<double> xs(L.x.begin(), L.x.end());
  for (double v : L.y)
    if (!(v > 0)) {
      t.why = "a value is not positive; a log-log fit needs positive values";
      return t;
    }
  if (xs.size() < 2) {
    t.why = "values at fewer than 2 lengths";
    return t;
  }
  // Fit once for the estimate and its standard error, then widen by the look's critical t.
  const stats::LineFit f = stats::fit_power_law(L.x, L.y, 0.95);
  t.estimate = f.slope;
  if (!f.slope_stderr) {
    t.why = "too few points for an interval";
    return t;
  }
  const double se = *f.slope_stderr;
  const double half = se == 0 ? 0.0 : critical(nominal, static_cast<double>(L.n - 2)) * se;
  t.interval = stats::Interval{f.slope - half, f.slope + half};
  ClaimResult r;
  decide_region(r, t.interval->lo, t.interval->hi, c.slope_lo, c.slope_hi);
  t.verdict = r.verdict;
  t.why = r.why;
  return t;
}

LookTest test_look(const ClaimSpec& c, bool higher_is_better, const LookData& L, double nominal) {
  switch (c.kind) {
    case ClaimKind::Better:
    case ClaimKind::NotWorse: return test_paired_look(c, higher_is_better, L, nominal);
    case ClaimKind::Ratio: return test_ratio_look(c, L, nominal);
    case ClaimKind::Scaling: return test_scaling_look(c, L, nominal);
    case ClaimKind::Dominates:  // judged as its halves, never whole
    case ClaimKind::Variance: break;  // refused in a sequential design (sweep_spec.cpp)
  }
  LRB_CHECK(false, "a dominates claim reached the judge whole");
  return {};
}

bool testable(const ClaimSpec& c, const LookData& L) {
  if (L.scratch.verdict == Verdict::NotTested) return false;
  if (L.exact) return L.n >= 1;
  if (c.kind == ClaimKind::Scaling) return L.n >= 3;
  return L.n >= 2;
}

struct ClaimState {
  bool open = true;
  bool in_family = false;     // better / not-worse: Holm
  bool rejected = false;      // decided supported or refuted (passes its α share on)
  std::vector<double> fractions;  // of the looks that tested it
  std::vector<std::size_t> sizes;  // the observations each of those looks' t rested on
  ClaimResult result;
  std::optional<LookTest> last_test;
  std::optional<LookData> last_data;
  double last_level = 0;
};

std::string look_word(std::size_t k) { return fmt::format("look {}", k); }

// The parts the judge tests: each claim, a dominates claim as its two halves.
struct ClaimParts {
  std::vector<ClaimSpec> parts;
  std::vector<std::size_t> owner;  // the claim of each part
};

ClaimParts parts_of(const std::vector<ClaimSpec>& claims) {
  ClaimParts p;
  for (std::size_t i = 0; i < claims.size(); ++i) {
    if (claims[i].kind == ClaimKind::Dominates) {
      p.parts.push_back(claims[i].metric_half());
      p.parts.push_back(claims[i].cost_half());
      p.owner.insert(p.owner.end(), {i, i});
      continue;
    }
    p.parts.push_back(claims[i]);
    p.owner.push_back(i);
  }
  return p;
}

// The spending boundary a look used: the claim's level, the t level applied, the spending.
struct UsedBoundary {
  double level = 0, nominal = 0;
  stats::SpendingBoundary spending;
};

// What a look's t rests on, as the sample size of a paired mean with the same degrees of
// freedom: the pairs, or the points less one for a slope (its t has n − 2).
std::size_t t_size(const ClaimSpec& c, const LookData& L) { return c.kind == ClaimKind::Scaling ? L.n - 1 : L.n; }

// The two-sided level of Student's t on the look's df that keeps the claim's error what its
// spending allows, the variance being estimated at every look (suite/stats/sequential_t.h):
// exact for a paired mean (better, not-worse, a ratio on the log scale); for a slope, the
// boundary of a mean on as many df (its looks' t are correlated alike, not identically).
double t_level(const ClaimSpec& c, const ClaimState& s, const LookData& L, const stats::SpendingBoundary& b) {
  std::vector<std::size_t> sizes = s.sizes;
  sizes.push_back(std::max(t_size(c, L), sizes.empty() ? std::size_t{2} : sizes.back()));
  return stats::sequential_t_boundary(sizes, b.spent).nominal.back();
}

// The study judged look by look: each look tests the open claims whose cells have reached
// its seeds, at their share of α (Holm within the better / not-worse family, the rest at
// their own level) and the spending boundary of their information fraction. A dominates
// claim is two parts: a refuted half closes the other; a supported half stops being
// tested while the other goes on.
class SequentialJudge {
 public:
  SequentialJudge(const SequentialSeeds& design, const std::vector<ClaimSpec>& claims, const std::vector<RunRecord>& runs,
                  const ClaimSettings& settings)
      : design_(design), sweep_claims_(claims), split_(parts_of(claims)), claims_(split_.parts), runs_(runs), settings_(settings),
        looks_(design.look_seeds()), st_(claims_.size()) {
    // Fine enough for the design's smallest step between looks (a builder refines itself
    // when failures make a step smaller still).
    spacing_ = std::min(0.05, std::sqrt(static_cast<double>(std::min(design.step, design.first)) / static_cast<double>(design.max)) / 5.0);
    for (std::size_t i = 0; i < claims_.size(); ++i) {
      st_[i].result.claim = claims_[i];
      st_[i].result.higher_is_better = higher_is_better(claims_[i].metric);
      st_[i].result.sequential = true;
      st_[i].in_family = claims_[i].kind == ClaimKind::Better || claims_[i].kind == ClaimKind::NotWorse;
      if (st_[i].in_family) ++family_;
    }
  }

  StudyJudgement judge(bool budget_spent) {
    StudyJudgement out;
    out.look_seeds = looks_;
    const std::size_t K = looks_.size();
    std::size_t k = 0;
    for (; k < K && any_open(); ++k) {
      const std::optional<WavePlan::End> ended = judge_look(k);
      if (!ended) break;  // the look's cells are not all finished
      if (*ended != WavePlan::End::Running) {
        out.plan.end = *ended;
        ++k;
        break;
      }
    }
    finish_plan(k, budget_spent, out.plan);
    for (std::size_t i = 0; i < claims_.size(); ++i) finish_result(i, k, out.plan);
    for (std::size_t i = 0; i < claims_.size(); ++i) {
      const std::size_t c = split_.owner[i];
      if (sweep_claims_[c].kind != ClaimKind::Dominates) {
        out.claims.push_back(std::move(st_[i].result));
        continue;
      }
      out.claims.push_back(fold_halves(sweep_claims_[c], std::move(st_[i].result), std::move(st_[i + 1].result)));
      ++i;
    }
    return out;
  }

 private:
  bool any_open() const { return std::any_of(st_.begin(), st_.end(), [](const ClaimState& s) { return s.open; }); }
  double level_of(const ClaimState& s) const {
    return s.in_family ? settings_.alpha / static_cast<double>(family_ - family_rejected_) : 1.0 - settings_.bootstrap.confidence;
  }

  // Look k: nothing when its cells are not all finished; else how the study stands after it
  // (Running: go on to the next look).
  std::optional<WavePlan::End> judge_look(std::size_t k) {
    const std::int64_t seeds = looks_[k];
    const bool last = k + 1 == looks_.size();
    std::vector<std::optional<LookData>> data(claims_.size());
    for (std::size_t i = 0; i < claims_.size(); ++i) {
      if (!st_[i].open) continue;
      data[i] = look_data(claims_[i], st_[i].result.higher_is_better, design_, runs_, seeds);
      if (!data[i]->complete) return std::nullopt;
    }
    std::vector<double> fraction(claims_.size(), 0.0);
    const std::vector<std::size_t> tested = claims_tested(data, last, fraction);
    std::map<std::size_t, LookTest> tests;
    std::map<std::size_t, UsedBoundary> used;
    test_until_stable(tested, data, fraction, tests, used);
    for (std::size_t i = 0; i < claims_.size(); ++i)
      if (data[i]) record_look(i, k, seeds, *data[i], tests, used);
    close_refuted_halves(k);
    if (!any_open()) return WavePlan::End::AllDecided;
    if (last) return WavePlan::End::MaxReached;
    return WavePlan::End::Running;
  }

  // Which open claims this look tests, and at what information fraction.
  std::vector<std::size_t> claims_tested(const std::vector<std::optional<LookData>>& data, bool last, std::vector<double>& fraction) {
    std::vector<std::size_t> tested;
    for (std::size_t i = 0; i < claims_.size(); ++i) {
      if (!st_[i].open) continue;
      ClaimState& s = st_[i];
      const LookData& L = *data[i];
      s.last_data = L;
      if (!testable(claims_[i], L)) continue;
      const double t = last ? 1.0 : std::min(1.0, static_cast<double>(L.n) / static_cast<double>(std::max<std::size_t>(1, L.max_n)));
      if (L.exact || s.fractions.empty() || t > s.fractions.back()) {
        fraction[i] = t;
        tested.push_back(i);
      }
    }
    return tested;
  }

  // Judge the look; a decision in the Holm family raises the others' share: judge again.
  void test_until_stable(const std::vector<std::size_t>& tested, const std::vector<std::optional<LookData>>& data,
                         const std::vector<double>& fraction, std::map<std::size_t, LookTest>& tests,
                         std::map<std::size_t, UsedBoundary>& used) {
    for (bool changed = true; changed;) {
      changed = false;
      for (std::size_t i : tested) {
        ClaimState& s = st_[i];
        if (!s.open) continue;
        const LookData& L = *data[i];
        const double level = level_of(s);
        std::vector<double> fr = s.fractions;
        if (!L.exact) fr.push_back(fraction[i]);
        const stats::SpendingBoundary b = L.exact ? stats::SpendingBoundary{} : boundary_for(level, fr, spacing_);
        const double nominal = L.exact ? 1.0 : t_level(claims_[i], s, L, b);
        LookTest t = test_look(claims_[i], s.result.higher_is_better, L, nominal);
        tests[i] = t;
        used[i] = {level, nominal, b};
        if (t.verdict == Verdict::Supported || t.verdict == Verdict::Refuted) {
          s.open = false;
          s.rejected = true;
          if (s.in_family) {
            ++family_rejected_;
            changed = true;
          }
        }
      }
    }
  }

  // Record the look for a claim it concerned; close what more seeds cannot decide.
  void record_look(std::size_t i, std::size_t k, std::int64_t seeds, const LookData& L, const std::map<std::size_t, LookTest>& tests,
                   const std::map<std::size_t, UsedBoundary>& used) {
    ClaimState& s = st_[i];
    ClaimLook look;
    look.look = k + 1;
    look.seeds = seeds;
    look.n = L.n;
    if (auto it = tests.find(i); it != tests.end()) {
      const auto& [level, nominal, b] = used.at(i);
      const LookTest& t = it->second;
      look.estimate = t.estimate;
      look.interval = t.interval;
      look.alpha = level;
      look.verdict = t.verdict;
      if (L.exact) {
        look.fraction = 1.0;
        look.confidence = 1.0;
      } else {
        look.fraction = b.fractions.back();
        look.z_boundary = b.z.back();
        look.confidence = 1.0 - nominal;
        s.fractions.push_back(b.fractions.back());
        s.sizes.push_back(t_size(claims_[i], L));
      }
      s.last_test = t;
      s.last_level = level;
      if (!s.rejected && L.exact) s.open = false;  // an exact tie: more seeds repeat it
      if (s.rejected) {
        s.result.stopped = fmt::format("decided at {} ({} seeds)", look_word(k + 1), seeds);
      } else if (L.exact) {
        s.result.stopped = fmt::format("closed at {}: an exact figure, the same on every seed", look_word(k + 1));
      }
    } else {
      look.alpha = level_of(s);
      look.verdict = L.scratch.verdict == Verdict::NotTested ? Verdict::NotTested : Verdict::Inconclusive;
      if (L.failed_side) {
        s.open = false;
        s.result.stopped = fmt::format("closed at {}: a side has no run with a value (see the notes)", look_word(k + 1));
      }
    }
    s.result.looks.push_back(look);
  }

  // A dominates claim whose half was refuted is refuted: its other half stops drawing seeds.
  void close_refuted_halves(std::size_t k) {
    for (std::size_t i = 0; i < claims_.size(); ++i) {
      const ClaimState& s = st_[i];
      if (!s.rejected || !s.last_test || s.last_test->verdict != Verdict::Refuted) continue;
      for (std::size_t j = 0; j < claims_.size(); ++j)
        if (j != i && split_.owner[j] == split_.owner[i] && st_[j].open) {
          st_[j].open = false;
          st_[j].result.stopped = fmt::format("closed at {}: the other half was refuted", look_word(k + 1));
        }
    }
  }

  // Where the study stands after k looks, and what the next wave runs.
  void finish_plan(std::size_t k, bool budget_spent, WavePlan& plan) const {
    const std::size_t K = looks_.size();
    if (k == K && plan.end == WavePlan::End::Running) plan.end = any_open() ? WavePlan::End::MaxReached : WavePlan::End::AllDecided;
    if (plan.end == WavePlan::End::Running && !any_open()) plan.end = WavePlan::End::AllDecided;
    plan.looks_done = k;
    if (plan.end == WavePlan::End::Running && budget_spent) plan.end = WavePlan::End::BudgetSpent;
    if (plan.end == WavePlan::End::Running) {
      plan.wave_seeds = looks_[k];
      plan.next_wave_seeds = k + 1 < K ? looks_[k + 1] : 0;
      // Indices into the sweep's claims (the scheduler reads them so): a claim is open while a part is.
      for (std::size_t i = 0; i < claims_.size(); ++i)
        if (st_[i].open && (plan.open.empty() || plan.open.back() != split_.owner[i])) plan.open.push_back(split_.owner[i]);
      plan.summary = fmt::format("look {} of {}: {} claim(s) open, their cells run to {} seeds", k + 1, K, plan.open.size(),
                                 plan.wave_seeds);
    } else {
      plan.summary = fmt::format("ended after {} of {} looks: {}", k, K, wave_end_name(plan.end));
    }
  }

  // Δ of a better / not-worse claim decided before the design's last look, adjusted for
  // having stopped there: the drift median-unbiased given that look (suite/stats/
  // group_sequential.h), in sd of Δ a seed, with the sd taken as known and each earlier look's
  // boundary the |t| it had to reach (Student's t at its nominal level and df), back in Δ.
  std::optional<double> adjusted_for_stopping(const ClaimResult& r) const {
    const ClaimSpec& c = r.claim;
    if ((c.kind != ClaimKind::Better && c.kind != ClaimKind::NotWorse) || !r.estimate || !r.sd || !(*r.sd > 0)) return std::nullopt;
    std::vector<double> information, bounds;
    for (const ClaimLook& l : r.looks)
      if (l.z_boundary && l.n >= 2 && (information.empty() || static_cast<double>(l.n) > information.back())) {
        information.push_back(static_cast<double>(l.n));
        bounds.push_back(critical(1.0 - l.confidence, static_cast<double>(l.n) - 1));
      }
    if (information.empty() || r.looks.empty() || r.looks.back().seeds >= design_.max) return std::nullopt;  // decided at the last look
    const double n = information.back();
    const double threshold = paired_threshold(c, r.higher_is_better);
    const double t = (*r.estimate - threshold) / (*r.sd / std::sqrt(n));
    if (!std::isfinite(t)) return std::nullopt;
    information.push_back(std::max(n + 1, static_cast<double>(design_.max)));  // a look after it: it stopped early
    const double drift = stats::median_unbiased_drift(information, bounds, information.size() - 2, t);
    if (!std::isfinite(drift)) return std::nullopt;
    return threshold + drift * *r.sd;
  }

  // Claim i's result: from the look that decided it, or the last that tested it.
  void finish_result(std::size_t i, std::size_t k, const WavePlan& plan) {
    const std::size_t K = looks_.size();
    ClaimState& s = st_[i];
    ClaimResult& r = s.result;
    if (s.last_data) {
      r.notes = s.last_data->scratch.notes;
      r.n = s.last_data->n;
      r.seeds = s.last_data->seeds;
      r.a_values = s.last_data->a;
      r.b_values = s.last_data->b;
    }
    if (claims_[i].kind == ClaimKind::Better || claims_[i].kind == ClaimKind::NotWorse)
      r.threshold = paired_threshold(claims_[i], r.higher_is_better);
    if (s.last_data && s.last_data->exact) r.notes.push_back(kExactNote);
    const bool have_test = s.last_test.has_value();
    if (have_test) {
      const ClaimLook* tested_look = nullptr;
      for (const auto& l : r.looks)
        if (l.z_boundary || l.confidence == 1.0) tested_look = &l;
      r.estimate = s.last_test->estimate;
      r.interval = s.last_test->interval;
      r.sd = s.last_test->sd;
      r.log_ratio = s.last_test->log_ratio;
      if (tested_look) {
        r.confidence = tested_look->confidence;
        r.n = tested_look->n;
      }
    }
    if (s.rejected) {
      r.verdict = s.last_test->verdict;
      r.why = s.last_test->why;
      r.estimate_adjusted = adjusted_for_stopping(r);
      return;
    }
    if (s.last_data && s.last_data->scratch.verdict == Verdict::NotTested && !have_test) {
      r.verdict = Verdict::NotTested;
      r.why = s.last_data->scratch.why;
    } else if (!have_test && s.open && plan.end == WavePlan::End::Running) {
      r.verdict = Verdict::NotYetJudged;  // not "inconclusive": nothing has been weighed
      r.why = fmt::format("no look has tested it yet: look {} needs its cells at {} seeds", k + 1, looks_[std::min(k, K - 1)]);
    } else {
      r.verdict = Verdict::Inconclusive;
      r.why = have_test ? s.last_test->why : "no look has tested it";
    }
    if (s.open) {
      switch (plan.end) {
        case WavePlan::End::Running:
          r.stopped = fmt::format("open: the study is at look {} of {} ({} seeds)", k + 1, K, looks_[std::min(k, K - 1)]);
          break;
        case WavePlan::End::BudgetSpent:
          r.stopped = fmt::format("budget spent before look {} of {}", k + 1, K);
          break;
        default:
          r.stopped = fmt::format("reached max ({} seeds) undecided", design_.max);
      }
    } else if (r.stopped.empty()) {
      r.stopped = "not tested";
    }
    if (r.verdict == Verdict::NotTested && s.last_data && s.last_data->scratch.verdict != Verdict::NotTested) r.verdict = Verdict::Inconclusive;
    // What a fixed design would need at the observed effect and spread, at the claim's level.
    if (r.sd && *r.sd > 0 && r.estimate && r.threshold) {
      const double effect = (*r.estimate - *r.threshold) / *r.sd;
      r.seeds_needed = stats::paired_t_seeds_needed(effect, s.last_level > 0 ? s.last_level : settings_.alpha, settings_.power);
    }
  }

  const SequentialSeeds& design_;
  const std::vector<ClaimSpec>& sweep_claims_;
  const ClaimParts split_;
  const std::vector<ClaimSpec>& claims_;  // the parts judged
  const std::vector<RunRecord>& runs_;
  const ClaimSettings& settings_;
  const std::vector<std::int64_t> looks_;
  double spacing_ = 0.05;
  std::vector<ClaimState> st_;
  std::size_t family_ = 0, family_rejected_ = 0;
};

}  // namespace

StudyJudgement judge_sequential_study(const SequentialSeeds& design, const std::vector<ClaimSpec>& claims,
                                      const std::vector<RunRecord>& runs, bool budget_spent, const ClaimSettings& settings) {
  return SequentialJudge(design, claims, runs, settings).judge(budget_spent);
}

}  // namespace lrb
