#include "suite/report/claims/claims.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "suite/contracts/figures.h"
#include "suite/core/text.h"
#include "suite/report/cells.h"
#include "suite/report/claims/claim_sides.h"
#include "suite/report/efficiency.h"
#include "suite/report/text_format.h"
#include "suite/report/variance_sources.h"
#include "suite/stats/multiple_testing.h"
#include "suite/stats/paired.h"
#include "suite/stats/power.h"
#include "suite/stats/scaling_fit.h"
#include "suite/stats/t_tests.h"
#include "suite/stats/variance_ratio.h"

namespace lrb {

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Supported: return "supported";
    case Verdict::Refuted: return "refuted";
    case Verdict::Inconclusive: return "inconclusive";
    case Verdict::NotTested: return "not tested";
    case Verdict::NotYetJudged: return "not yet judged";
  }
  return "?";
}

namespace {

using namespace claim_sides;

void evaluate_ratio(ClaimResult& r, const std::vector<RunRecord>& runs, const ClaimSettings& s) {
  if (!paired_sides(r, runs, "seeds")) return;
  const std::vector<double>& xa = r.a_values;
  const std::vector<double>& xb = r.b_values;
  r.n = xa.size();
  r.confidence = s.bootstrap.confidence;
  if (r.n == 0) {
    r.verdict = Verdict::NotTested;
    r.why = "no seed has values for both A and B";
    return;
  }
  const double mean_b = stats::mean(xb);
  if (mean_b == 0) {
    r.verdict = Verdict::Inconclusive;
    r.why = "mean(B) is 0: the ratio is undefined";
    return;
  }
  r.estimate = stats::mean(xa) / mean_b;
  if (r.n == 1 && exact_figure(r.claim.metric, runs, r.claim.a, r.claim.b)) {
    r.interval = stats::Interval{*r.estimate, *r.estimate};
    r.notes.push_back(kExactNote);
    decide_region(r, *r.estimate, *r.estimate, r.claim.at_least, r.claim.at_most);
    return;
  }
  if (r.n < 2) {
    r.verdict = Verdict::Inconclusive;
    r.why = "one paired seed: no interval; a study needs at least 2";
    return;
  }
  // A t interval holds at its n (a percentile bootstrap of two seeds has three possible
  // means, and undercovers), so a verdict from few seeds is one the data allow: on the
  // paired log-ratios where every value is positive, else Fieller's.
  const double critical = stats::t_critical(r.confidence, static_cast<double>(r.n - 1));
  const RatioInterval judged = ratio_interval(xa, xb, critical);
  r.log_ratio = judged.geometric_mean.has_value();
  if (judged.geometric_mean) r.estimate = judged.geometric_mean;
  const std::optional<stats::Interval>& ci = judged.interval;
  if (!ci) {
    r.verdict = Verdict::Inconclusive;
    r.why = "Fieller's interval is unbounded: mean(B) is not clear of 0 at this level";
    return;
  }
  r.interval = ci;
  decide_region(r, ci->lo, ci->hi, r.claim.at_least, r.claim.at_most);
}

// The design's factors that hold one of `streams` ("data+dropout" holds dropout).
std::vector<std::string> factors_holding(const CrossedDesign& d, const std::vector<std::string>& streams) {
  std::vector<std::string> out;
  for (const auto& f : d.factors)
    for (const auto& s : streams)
      if (factor_holds_stream(f, s)) {
        out.push_back(f);
        break;
      }
  return out;
}

// The values a variance claim reads by replicate: A's, or A − B on the replicates both ran.
std::optional<stats::SeedValues> variance_values(ClaimResult& r, const std::vector<RunRecord>& runs) {
  const ClaimSpec& c = r.claim;
  if (c.b.match.empty()) {
    const SideRuns a = collect(c.a, c.metric, runs, "");
    if (side_missing(r, c.a, a, "A", c.a.expected_runs)) return std::nullopt;
    return by_seed(a);
  }
  if (!paired_sides(r, runs, "stream tuples")) return std::nullopt;
  stats::SeedValues d;
  for (std::size_t i = 0; i < r.seeds.size(); ++i) d.emplace(r.seeds[i], r.a_values[i] - r.b_values[i]);
  return d;
}

void evaluate_variance(ClaimResult& r, const std::vector<RunRecord>& runs, const ClaimSettings& s) {
  const ClaimSpec& c = r.claim;
  const auto by_tuple = variance_values(r, runs);
  if (!by_tuple) return;
  std::vector<std::int64_t> replicates;
  std::vector<double> values;
  for (const auto& [t, v] : *by_tuple) {
    replicates.push_back(t);
    values.push_back(v);
  }
  r.seeds = replicates;
  if (c.b.match.empty()) r.a_values = values;
  r.n = values.size();
  r.confidence = s.bootstrap.confidence;
  const auto design = crossed_design(replicates, values, r.confidence);
  r.verdict = Verdict::NotTested;
  if (!design) {
    r.why = "the runs found vary fewer than two streams: no crossed design";
    return;
  }
  if (!design->components) {
    r.why = design->why_not + " (runs still to finish or failed: see the notes)";
    return;
  }
  const std::vector<std::string> num = factors_holding(*design, c.of);
  const std::vector<std::string> den = c.against.empty() ? design->factors : factors_holding(*design, c.against);
  if (num.empty() || den.empty()) {
    r.why = "the runs found do not vary " + join(num.empty() ? c.of : c.against, ", ");
    return;
  }
  std::vector<std::string> levels;
  for (std::size_t f = 0; f < design->factors.size(); ++f) levels.push_back(fmt::format("{} {}", design->factors[f], design->levels[f]));
  r.notes.push_back(fmt::format("crossed design of {} ({} values): V(of) sums the components of the terms involving {}, V(against) "
                                "those involving {}",
                                join(levels, " × "), values.size(), join(num, ", "), join(den, ", ")));
  const stats::VarianceRatio v = stats::variance_ratio(*design->components, num, den, r.confidence, s.bootstrap.seed);
  if (!v.interval) {
    r.verdict = Verdict::Inconclusive;
    r.why = "V(against) is 0: the values do not vary";
    return;
  }
  r.estimate = v.estimate;
  r.interval = stats::Interval{v.interval->first, v.interval->second};
  decide_region(r, r.interval->lo, r.interval->hi, c.at_least, c.at_most);
}

void evaluate_scaling(ClaimResult& r, const std::vector<RunRecord>& runs, const ClaimSettings& s) {
  const SideRuns a = collect(r.claim.a, r.claim.metric, runs, r.claim.over);
  if (side_missing(r, r.claim.a, a, "A", r.claim.a.expected_runs)) return;
  std::set<double> with_value;
  std::vector<double> x, y;
  for (const auto& [run, v] : a.values) {
    const double xv = over_value(*run, r.claim.over);
    with_value.insert(xv);
    x.push_back(xv);
    y.push_back(v);
  }
  std::vector<std::string> missing;
  for (double e : r.claim.a.expected_over)
    if (!with_value.count(e)) missing.push_back(fmt::format("{}={:g}", over_name(r.claim), e));
  r.n = x.size();
  r.confidence = s.bootstrap.confidence;
  if (!missing.empty()) {
    r.verdict = Verdict::NotTested;
    r.why = "no value at " + join(missing, ", ") + " (see the notes)";
    return;
  }
  if (with_value.size() < 3) {
    r.verdict = Verdict::NotTested;
    r.why = fmt::format("values at {} {} value(s); a slope with an interval needs 3", with_value.size(), over_name(r.claim));
    return;
  }
  for (std::size_t i = 0; i < y.size(); ++i)
    if (!(y[i] > 0)) {
      r.verdict = Verdict::NotTested;
      r.why = fmt::format("a value is not positive ({} at {}={:g}); a log-log fit needs positive values", y[i], over_name(r.claim), x[i]);
      return;
    }
  const stats::LineFit f = stats::fit_power_law(x, y, s.bootstrap.confidence);
  r.estimate = f.slope;
  if (!f.slope_ci) {
    r.verdict = Verdict::Inconclusive;
    r.why = "too few points for an interval";
    return;
  }
  r.interval = f.slope_ci;
  decide_region(r, f.slope_ci->lo, f.slope_ci->hi, r.claim.slope_lo, r.claim.slope_hi);
}

// First pass of a better / not-worse claim: the paired differences, shifted by the
// threshold into `shifted`, and the raw test. True when the claim joins the Holm family
// (it has a p-value); otherwise its verdict is set here.
bool evaluate_paired(ClaimResult& r, const std::vector<RunRecord>& runs, std::vector<double>& shifted) {
  r.threshold = paired_threshold(r.claim, r.higher_is_better);
  if (!paired_sides(r, runs, "seeds")) return false;
  std::vector<double> differences;
  for (std::size_t i = 0; i < r.seeds.size(); ++i) differences.push_back(r.a_values[i] - r.b_values[i]);
  r.n = differences.size();
  if (r.n == 0) {
    r.verdict = Verdict::NotTested;
    r.why = "no seed has values for both A and B";
    return false;
  }
  r.estimate = stats::mean(differences);
  for (double d : differences) shifted.push_back(d - *r.threshold);
  const auto decide_edge = [&r](bool exact) {
    auto edge = decide_on_the_edge(r.claim, exact);
    r.verdict = edge.verdict;
    r.why = std::move(edge.why);
  };
  if (r.n < 2 && exact_figure(r.claim.metric, runs, r.claim.a, r.claim.b)) {
    // One seed of an exact count: the difference itself, decided without a test.
    r.interval = stats::Interval{*r.estimate, *r.estimate};
    r.notes.push_back(kExactNote);
    const bool claimed_side = r.higher_is_better ? *r.estimate > *r.threshold : *r.estimate < *r.threshold;
    const bool other_side = r.higher_is_better ? *r.estimate < *r.threshold : *r.estimate > *r.threshold;
    if (!claimed_side && !other_side) {
      decide_edge(true);
      return false;
    }
    r.verdict = claimed_side ? Verdict::Supported : Verdict::Refuted;
    r.why = claimed_side ? "the exact difference lies on the claimed side" : "the exact difference lies on the other side";
    return false;
  }
  if (r.n < 2) {
    r.verdict = Verdict::Inconclusive;
    r.why = "one paired seed: no interval; a study needs at least 2";
    return false;
  }
  if (std::all_of(shifted.begin(), shifted.end(), [](double d) { return d == 0.0; })) {
    // No spread and no distance from the threshold: no test can speak; the claim's words do.
    r.sd = 0.0;
    r.interval = stats::Interval{*r.threshold, *r.threshold};
    decide_edge(exact_figure(r.claim.metric, runs, r.claim.a, r.claim.b));
    return false;
  }
  r.sd = stats::sample_std(differences);
  const bool catalogued_exact = exact_figure(r.claim.metric, runs, r.claim.a, r.claim.b);
  const bool exact = catalogued_exact && same_on_every_seed(r.a_values) && same_on_every_seed(r.b_values);
  if (catalogued_exact && !exact) r.notes.push_back(kVaryingExactNote);
  if (*r.sd == 0 && !exact) {
    r.verdict = Verdict::Inconclusive;
    r.why = kNoSpreadWhy;
    return false;
  }
  r.p_value = stats::t_test_one_sample(shifted).p_value;
  if (r.p_value) return true;
  r.verdict = Verdict::Inconclusive;
  r.why = "undefined: the differences overflow double precision (their mean or spread is infinite)";
  return false;
}

}  // namespace

namespace {

std::vector<ClaimResult> evaluate_parts(const std::vector<ClaimSpec>& claims, const std::vector<RunRecord>& runs,
                                        const ClaimSettings& s) {
  std::vector<ClaimResult> out;
  std::vector<std::vector<double>> shifted(claims.size());  // better / not-worse: Δ − threshold per seed
  std::vector<std::size_t> family;  // indices of tested better / not-worse claims with a p-value
  for (std::size_t k = 0; k < claims.size(); ++k) {
    ClaimResult r;
    r.claim = claims[k];
    r.higher_is_better = higher_is_better(r.claim.metric);
    const bool directed = figure_direction(r.claim.metric) != Direction::None;
    if (!directed && (r.claim.kind == ClaimKind::Better || r.claim.kind == ClaimKind::NotWorse)) {
      // Validation refuses these; a manifest of an older lrbench may still hold one.
      r.verdict = Verdict::NotTested;
      r.why = "'" + r.claim.metric + "' has no better side in the figure catalogue: claim a ratio or a range instead";
    } else if (r.claim.kind == ClaimKind::Ratio)
      evaluate_ratio(r, runs, s);
    else if (r.claim.kind == ClaimKind::Scaling)
      evaluate_scaling(r, runs, s);
    else if (r.claim.kind == ClaimKind::Variance)
      evaluate_variance(r, runs, s);
    else if (evaluate_paired(r, runs, shifted[k]))
      family.push_back(k);
    out.push_back(std::move(r));
  }

  // Holm over the family: the step of each claim decides the level of its interval.
  std::vector<double> ps;
  for (std::size_t k : family) ps.push_back(*out[k].p_value);
  const std::vector<double> adjusted = stats::holm(ps);
  std::vector<std::size_t> order(family.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return ps[x] < ps[y]; });
  const std::size_t m = family.size();
  for (std::size_t step = 0; step < m; ++step) {
    const std::size_t i = order[step];
    ClaimResult& r = out[family[i]];
    r.p_holm = adjusted[i];
    r.holm_step = step + 1;
    r.family = m;
    const double level = s.alpha / static_cast<double>(m - step);
    r.confidence = 1.0 - level;
    const stats::TTest t = stats::t_test_one_sample(shifted[family[i]], r.confidence);
    if (t.ci) r.interval = stats::Interval{t.ci->lo + *r.threshold, t.ci->hi + *r.threshold};
    const bool claimed_side = r.higher_is_better ? *r.estimate > *r.threshold : *r.estimate < *r.threshold;
    if (*r.p_holm <= s.alpha) {
      r.verdict = claimed_side ? Verdict::Supported : Verdict::Refuted;
      r.why = claimed_side ? "the interval lies wholly on the claimed side" : "the interval lies wholly on the other side";
      continue;
    }
    r.verdict = Verdict::Inconclusive;
    const bool excludes = r.interval && (r.interval->lo > *r.threshold || r.interval->hi < *r.threshold);
    r.why = excludes ? "held back by Holm: a claim with a smaller p was not decided"
                     : "the interval straddles the threshold";
    if (r.sd && *r.sd > 0) {
      const double effect = (*r.estimate - *r.threshold) / *r.sd;
      r.seeds_needed = stats::paired_t_seeds_needed(effect, level, s.power);
    }
  }
  return out;
}

}  // namespace

std::vector<ClaimResult> evaluate_claims(const std::vector<ClaimSpec>& claims, const std::vector<RunRecord>& runs,
                                         const ClaimSettings& s) {
  std::vector<ClaimSpec> parts;
  for (const auto& c : claims) {
    if (c.kind != ClaimKind::Dominates) {
      parts.push_back(c);
      continue;
    }
    parts.push_back(c.metric_half());
    parts.push_back(c.cost_half());
  }
  std::vector<ClaimResult> judged = evaluate_parts(parts, runs, s);
  std::vector<ClaimResult> out;
  std::size_t next = 0;
  for (const auto& c : claims) {
    if (c.kind != ClaimKind::Dominates) {
      out.push_back(std::move(judged[next++]));
      continue;
    }
    out.push_back(fold_halves(c, std::move(judged[next]), std::move(judged[next + 1])));
    next += 2;
  }
  return out;
}

ClaimResult fold_halves(const ClaimSpec& claim, ClaimResult metric, ClaimResult cost) {
  ClaimResult r = metric;  // the metric half's evidence, read first
  r.claim = claim;
  const auto either = [&](Verdict v) { return metric.verdict == v || cost.verdict == v; };
  if (either(Verdict::Refuted)) r.verdict = Verdict::Refuted;
  else if (metric.verdict == Verdict::Supported && cost.verdict == Verdict::Supported) r.verdict = Verdict::Supported;
  else if (either(Verdict::NotTested)) r.verdict = Verdict::NotTested;
  else if (either(Verdict::NotYetJudged)) r.verdict = Verdict::NotYetJudged;
  else r.verdict = Verdict::Inconclusive;
  r.why = fmt::format("metric half {}: {}; cost half {}: {}", verdict_name(metric.verdict), metric.why, verdict_name(cost.verdict), cost.why);
  for (const auto& n : cost.notes)
    if (std::find(r.notes.begin(), r.notes.end(), n) == r.notes.end()) r.notes.push_back(n);
  if (r.sequential) r.stopped = "metric half: " + metric.stopped + "; cost half: " + cost.stopped;
  r.halves.clear();
  r.halves.push_back(std::move(metric));
  r.halves.push_back(std::move(cost));
  return r;
}

namespace {

// A difference in the metric's own unit: "-6.70 MiB", "+12.3 ms", "+0.0125".
std::string signed_in_unit(const std::string& metric, double v) {
  for (const auto& em : efficiency_metrics())
    if (metric == em.name && (em.unit == EfficiencyUnit::kBytes || em.unit == EfficiencyUnit::kSeconds)) {
      const std::string magnitude = format_efficiency(em, std::fabs(v));
      return (v < 0 ? "-" : "+") + magnitude;
    }
  return format_signed(v);
}

}  // namespace

std::string claim_number(const ClaimResult& r, double v) {
  switch (r.claim.kind) {
    case ClaimKind::Better:
    case ClaimKind::NotWorse:
    case ClaimKind::Dominates: return signed_in_unit(r.claim.metric, v);
    case ClaimKind::Ratio:
    case ClaimKind::Variance: return fmt::format("{:.4g}", v);
    case ClaimKind::Scaling: return fmt::format("{:.3f}", v);
  }
  return fmt::format("{:g}", v);
}

std::string confidence_text(double confidence, bool near_certain) {
  const double level = confidence * 100.0;
  if (std::fabs(level - std::round(level)) < 1e-9) return fmt::format("{:.0f} %", level);
  // A sequential look's level may lie very close to 100 %: say how far from it.
  if (near_certain && level >= 99.95) return fmt::format("100 − {:.2g} %", 100.0 - level);
  return fmt::format("{:.1f} %", level);
}

std::string claim_evidence(const ClaimResult& r) {
  if (r.halves.size() == 2) return claim_evidence(r.halves[0]) + "; cost " + claim_evidence(r.halves[1]);
  if (!r.estimate) return "–";
  const std::string pct = confidence_text(r.confidence, r.sequential);
  // A sequential claim's interval is the repeated interval of the look that decided it (or the last).
  std::string at_look;
  if (r.sequential) {
    std::size_t look = 0;
    for (const auto& l : r.looks)
      if (l.interval) look = l.look;
    if (look) at_look = fmt::format(", repeated, look {}", look);
  }
  switch (r.claim.kind) {
    case ClaimKind::Better:
    case ClaimKind::NotWorse: {
      const std::string& m = r.claim.metric;
      std::string s = "Δ = " + signed_in_unit(m, *r.estimate);
      if (r.interval) s += fmt::format(" [{}, {}] ({} t{})", signed_in_unit(m, r.interval->lo), signed_in_unit(m, r.interval->hi), pct, at_look);
      if (r.p_holm) s += ", p (Holm) = " + format_p(*r.p_holm);
      if (r.estimate_adjusted) s += "; decided early: Δ adjusted for stopping = " + signed_in_unit(m, *r.estimate_adjusted);
      return s;
    }
    case ClaimKind::Ratio: {
      std::string s = fmt::format(r.log_ratio ? "A / B = {:.4g} (geometric mean)" : "A / B = {:.4g}", *r.estimate);
      if (r.interval)
        s += fmt::format(" [{:.4g}, {:.4g}] ({} {}{})", r.interval->lo, r.interval->hi, pct,
                         r.log_ratio ? "log-ratio t" : r.confidence >= 1.0 ? "exact" : "Fieller", at_look);
      return s;
    }
    case ClaimKind::Scaling: {
      std::string s = fmt::format("slope = {:.3f}", *r.estimate);
      if (r.interval) s += fmt::format(" [{:.3f}, {:.3f}] ({} t{})", r.interval->lo, r.interval->hi, pct, at_look);
      return s;
    }
    case ClaimKind::Variance: {
      const std::string& against = r.claim.against.empty() ? std::string("all") : join(r.claim.against, ", ");
      std::string s = fmt::format("V({}) / V({}) = {:.4g}", join(r.claim.of, ", "), against, *r.estimate);
      if (r.interval) s += fmt::format(" [{:.4g}, {:.4g}] ({} generalized)", r.interval->lo, r.interval->hi, pct);
      return s;
    }
    case ClaimKind::Dominates: break;  // judged as its halves (above)
  }
  return "–";
}

}  // namespace lrb
