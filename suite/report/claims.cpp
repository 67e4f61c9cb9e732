#include "suite/report/claims.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "suite/core/text.h"
#include "suite/report/cells.h"
#include "suite/report/efficiency.h"
#include "suite/report/text_format.h"
#include "suite/stats/multiple_testing.h"
#include "suite/stats/paired.h"
#include "suite/stats/power.h"
#include "suite/stats/ratio.h"
#include "suite/stats/scaling_fit.h"
#include "suite/stats/t_tests.h"

namespace lrb {

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Supported: return "supported";
    case Verdict::Refuted: return "refuted";
    case Verdict::Inconclusive: return "inconclusive";
    case Verdict::NotTested: return "not tested";
  }
  return "?";
}

namespace {

// The runs of one side of a claim: values by seed (or points), and what gave none.
struct SideRuns {
  std::vector<std::pair<const RunRecord*, double>> values;
  std::vector<std::string> problems;  // "seed 2 failed: out of memory"
  std::size_t found = 0;              // runs of the side in the results, any status
};

std::string over_name(const ClaimSpec& c) { return c.over.substr(c.over.rfind('.') + 1); }

double over_value(const RunRecord& r, const std::string& over) {
  const json& j = over == "task.seq_len" ? r.spec.at("task").at("seq_len") : r.spec.at("train").at("batch_size");
  return j.get<double>();
}

SideRuns collect(const CellSelector& sel, const std::string& metric, const std::vector<RunRecord>& runs, const std::string& over) {
  SideRuns s;
  for (const auto& r : runs) {
    if (!sel.matches(r.spec)) continue;
    ++s.found;
    const std::string at = (over.empty() ? std::string() : fmt::format("{}={:g} ", over.substr(over.rfind('.') + 1), over_value(r, over))) +
                           "seed " + std::to_string(r.spec.at("seed_index").get<std::int64_t>());
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
  for (const auto& [r, x] : s.values) v.emplace(r->spec.at("seed_index").get<std::int64_t>(), x);
  return v;
}

// Not tested when a side has no value; notes for runs without one and runs not found.
bool side_missing(ClaimResult& r, const CellSelector& sel, const SideRuns& s, const char* name) {
  const std::string who = std::string(name) + " (" + sel.label + ")";
  for (const auto& p : s.problems) r.notes.push_back(who + ": " + p);
  if (sel.expected_runs > s.found)
    r.notes.push_back(fmt::format("{}: {} of {} run(s) not in the results (not run yet, or a damaged file)", who,
                                  sel.expected_runs - s.found, sel.expected_runs));
  if (!s.values.empty()) return false;
  r.verdict = Verdict::NotTested;
  r.why = who + " has no run with a value" +
          (s.found == 0 ? ": none of its runs is in the results" : fmt::format(" ({} run(s) without one; see the notes)", s.found));
  return true;
}

// Figures that are exact counts on CPU: the counting allocator's bytes (and the batch search
// built on them), parameters and analytic FLOPs depend on shapes alone, never on the seed
// or the machine's load. One run of such a figure is the figure, with no sampling spread.
bool exact_figure(const std::string& metric, const std::vector<RunRecord>& runs, const CellSelector& a, const CellSelector& b) {
  static const std::set<std::string> exact = {"peak_bytes", "peak_step_bytes", "attention_peak_bytes", "max_batch_in_budget",
                                              "params", "flops_per_sample"};
  // A variant's inference peak (infer_peak_bytes_b<B>) is a count of the same allocator.
  if (!exact.count(metric) && metric.rfind("infer_peak_bytes_b", 0) != 0) return false;
  for (const auto& r : runs)
    if ((a.matches(r.spec) || (!b.match.empty() && b.matches(r.spec))) && r.spec.value("device", std::string("cpu")) != "cpu")
      return false;
  return true;
}

constexpr const char* kExactNote = "an exact figure (a deterministic count on CPU, the same on every seed): one seed gives it";

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

void evaluate_ratio(ClaimResult& r, const std::vector<RunRecord>& runs, const ClaimSettings& s) {
  const SideRuns a = collect(r.claim.a, r.claim.metric, runs, "");
  const SideRuns b = collect(r.claim.b, r.claim.metric, runs, "");
  const bool miss_a = side_missing(r, r.claim.a, a, "A"), miss_b = side_missing(r, r.claim.b, b, "B");
  if (miss_a || miss_b) return;
  const stats::SeedPairing pairing = stats::pair_by_seed(by_seed(a), by_seed(b));
  const stats::SeedValues va = by_seed(a), vb = by_seed(b);
  std::vector<double> xa, xb;
  for (auto seed : pairing.seeds) {
    xa.push_back(va.at(seed));
    xb.push_back(vb.at(seed));
  }
  if (!pairing.only_a.empty() || !pairing.only_b.empty())
    r.notes.push_back(fmt::format("seeds on one side only (not used): {} A, {} B", pairing.only_a.size(), pairing.only_b.size()));
  r.seeds = pairing.seeds;
  r.n = xa.size();
  r.confidence = s.bootstrap.confidence;
  if (r.n == 0) {
    r.verdict = Verdict::NotTested;
    r.why = "no seed has values for both A and B";
    return;
  }
  const stats::RatioEstimate e = stats::ratio_of_means(xa, xb, s.bootstrap);
  r.estimate = e.ratio;
  if (!e.ratio) {
    r.verdict = Verdict::Inconclusive;
    r.why = "mean(B) is 0: the ratio is undefined";
    return;
  }
  if (!e.percentile && r.n == 1 && exact_figure(r.claim.metric, runs, r.claim.a, r.claim.b)) {
    r.interval = stats::Interval{*e.ratio, *e.ratio};
    r.notes.push_back(kExactNote);
    decide_region(r, *e.ratio, *e.ratio, r.claim.at_least, r.claim.at_most);
    return;
  }
  if (!e.percentile) {
    r.verdict = Verdict::Inconclusive;
    r.why = r.n < 2 ? "one paired seed: no interval; a study needs at least 2" : "a bootstrap resample has mean(B) = 0: no interval";
    return;
  }
  r.interval = e.percentile;
  decide_region(r, e.percentile->lo, e.percentile->hi, r.claim.at_least, r.claim.at_most);
}

void evaluate_scaling(ClaimResult& r, const std::vector<RunRecord>& runs, const ClaimSettings& s) {
  const SideRuns a = collect(r.claim.a, r.claim.metric, runs, r.claim.over);
  if (side_missing(r, r.claim.a, a, "A")) return;
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

// The threshold Δ must beat, and on which side, in the metric's direction.
double paired_threshold(const ClaimSpec& c, bool higher_is_better) {
  const double t = c.kind == ClaimKind::Better ? c.margin : -c.margin;
  return higher_is_better ? t : -t;
}

// First pass of a better / not-worse claim: the differences and the raw test.
struct PairedPrep {
  std::vector<double> shifted;  // Δ − threshold
};

}  // namespace

std::vector<ClaimResult> evaluate_claims(const std::vector<ClaimSpec>& claims, const std::vector<RunRecord>& runs,
                                         const ClaimSettings& s) {
  std::vector<ClaimResult> out;
  std::vector<PairedPrep> prep(claims.size());
  std::vector<std::size_t> family;  // indices of tested better / not-worse claims with a p-value
  for (std::size_t k = 0; k < claims.size(); ++k) {
    ClaimResult r;
    r.claim = claims[k];
    r.higher_is_better = !lower_is_better(r.claim.metric);
    if (r.claim.kind == ClaimKind::Ratio) {
      evaluate_ratio(r, runs, s);
    } else if (r.claim.kind == ClaimKind::Scaling) {
      evaluate_scaling(r, runs, s);
    } else {
      const SideRuns a = collect(r.claim.a, r.claim.metric, runs, "");
      const SideRuns b = collect(r.claim.b, r.claim.metric, runs, "");
      const bool miss_a = side_missing(r, r.claim.a, a, "A"), miss_b = side_missing(r, r.claim.b, b, "B");
      r.threshold = paired_threshold(r.claim, r.higher_is_better);
      if (!miss_a && !miss_b) {
        const stats::SeedPairing p = stats::pair_by_seed(by_seed(a), by_seed(b));
        if (!p.only_a.empty() || !p.only_b.empty())
          r.notes.push_back(fmt::format("seeds on one side only (not used): {} A, {} B", p.only_a.size(), p.only_b.size()));
        r.seeds = p.seeds;
        r.n = p.differences.size();
        if (r.n == 0) {
          r.verdict = Verdict::NotTested;
          r.why = "no seed has values for both A and B";
        } else {
          r.estimate = stats::mean(p.differences);
          for (double d : p.differences) prep[k].shifted.push_back(d - *r.threshold);
          if (r.n < 2 && exact_figure(r.claim.metric, runs, r.claim.a, r.claim.b)) {
            // One seed of an exact count: the difference itself, decided without a test.
            r.interval = stats::Interval{*r.estimate, *r.estimate};
            r.notes.push_back(kExactNote);
            const bool claimed_side = r.higher_is_better ? *r.estimate > *r.threshold : *r.estimate < *r.threshold;
            const bool other_side = r.higher_is_better ? *r.estimate < *r.threshold : *r.estimate > *r.threshold;
            r.verdict = claimed_side ? Verdict::Supported : other_side ? Verdict::Refuted : Verdict::Inconclusive;
            r.why = claimed_side ? "the exact difference lies on the claimed side"
                    : other_side ? "the exact difference lies on the other side"
                                 : "the exact difference equals the threshold";
          } else if (r.n < 2) {
            r.verdict = Verdict::Inconclusive;
            r.why = "one paired seed: no interval; a study needs at least 2";
          } else {
            r.sd = stats::sample_std(p.differences);
            r.p_value = stats::t_test_one_sample(prep[k].shifted).p_value;
            if (r.p_value) family.push_back(k);
          }
        }
      }
    }
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
    const stats::TTest t = stats::t_test_one_sample(prep[family[i]].shifted, r.confidence);
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

std::string claim_evidence(const ClaimResult& r) {
  if (!r.estimate) return "–";
  const double level = r.confidence * 100.0;
  const std::string pct = std::fabs(level - std::round(level)) < 1e-9 ? fmt::format("{:.0f} %", level) : fmt::format("{:.1f} %", level);
  switch (r.claim.kind) {
    case ClaimKind::Better:
    case ClaimKind::NotWorse: {
      const std::string& m = r.claim.metric;
      std::string s = "Δ = " + signed_in_unit(m, *r.estimate);
      if (r.interval) s += fmt::format(" [{}, {}] ({} t)", signed_in_unit(m, r.interval->lo), signed_in_unit(m, r.interval->hi), pct);
      if (r.p_holm) s += ", p (Holm) = " + format_p(*r.p_holm);
      return s;
    }
    case ClaimKind::Ratio: {
      std::string s = fmt::format("A / B = {:.4g}", *r.estimate);
      if (r.interval) s += fmt::format(" [{:.4g}, {:.4g}] ({} bootstrap)", r.interval->lo, r.interval->hi, pct);
      return s;
    }
    case ClaimKind::Scaling: {
      std::string s = fmt::format("slope = {:.3f}", *r.estimate);
      if (r.interval) s += fmt::format(" [{:.3f}, {:.3f}] ({} t)", r.interval->lo, r.interval->hi, pct);
      return s;
    }
  }
  return "–";
}

}  // namespace lrb
