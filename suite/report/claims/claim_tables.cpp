#include "suite/report/claims/claim_tables.h"

#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join (in fmt/format.h only up to fmt 10)

#include <algorithm>

#include "suite/config/sequential_design.h"
#include "suite/core/text.h"
#include "suite/report/claims/claims.h"
#include "suite/report/table_cells.h"
#include "suite/report/text_format.h"

namespace lrb {

using namespace table_cells;

namespace {

std::string seeds_needed_text(const ClaimResult& r) {
  if (r.verdict != Verdict::Inconclusive || !r.sd) return "";
  if (r.seeds_needed)
    return fmt::format("about {} paired seeds would give 80 % power at the observed effect and spread", *r.seeds_needed);
  return "no feasible number of seeds (≤ 100000) reaches 80 % power at the observed effect";
}

// A claim as the looks judged it: a dominates claim's two halves, else the claim itself.
std::vector<const ClaimResult*> claim_parts(const ClaimResult& r) {
  if (r.halves.empty()) return {&r};
  return {&r.halves[0], &r.halves[1]};
}

}  // namespace

Table claims_table(const Analysis& a) {
  Table tab;
  tab.id = "claims";
  tab.title = "claims — verdicts";
  // The verdict and its evidence first: the statement and its source are long texts that
  // pushed them off a wide screen.
  tab.columns = {"claim", "verdict", "evidence", "n", "claimed", "metric", "A vs B", "statement", "source"};
  for (std::size_t k = 0; k < a.claims.size(); ++k) {
    const ClaimResult& r = a.claims[k];
    std::vector<TableCell> row;
    row.push_back(text(r.claim.name));
    row.push_back(text(verdict_name(r.verdict)));
    row.back().best = r.verdict == Verdict::Supported;
    row.back().alert = r.verdict == Verdict::NotTested || r.verdict == Verdict::Refuted;
    row.push_back(r.estimate ? number(*r.estimate, claim_evidence(r)) : text("–"));
    row.push_back(count(r.n));
    row.back().caution = r.n > 0 && r.n < kMinBootstrapN && r.interval && r.interval->lo < r.interval->hi;
    row.push_back(text(r.claim.claimed_text(r.higher_is_better)));
    row.push_back(text(display_metric(r.claim.metric) + (r.higher_is_better ? " (↑)" : " (↓)") +
                       (r.claim.kind == ClaimKind::Dominates ? ", cost " + r.claim.cost + " (↓)" : "")));
    row.push_back(text(r.claim.kind == ClaimKind::Scaling ? r.claim.a.label + " over " + r.claim.over.substr(r.claim.over.rfind('.') + 1)
                       : r.claim.b.match.empty() ? r.claim.a.label
                                                          : r.claim.a.label + " vs " + r.claim.b.label));
    row.push_back(text(r.claim.statement));
    row.push_back(text(r.claim.source));
    tab.rows.push_back(std::move(row));
    tab.row_keys.push_back("claim:" + std::to_string(k));
  }
  const auto fixed_paired = std::count_if(a.claims.begin(), a.claims.end(), [](const ClaimResult& r) {
    return !r.sequential && (r.claim.kind == ClaimKind::Better || r.claim.kind == ClaimKind::NotWorse || r.claim.kind == ClaimKind::Dominates);
  });
  const bool any_fixed = std::any_of(a.claims.begin(), a.claims.end(),
                                     [](const ClaimResult& r) { return !r.sequential && r.claim.kind != ClaimKind::Variance; });
  if (any_fixed)
    tab.notes.push_back(fmt::format(
        "better / not-worse: Δ = A − B per seed over the seeds both ran, tested against the claimed threshold (two-sided t), "
        "Holm-adjusted over the report's {} such claim(s) at α = {}; the interval is the t interval at the level of the claim's Holm step; "
        "ratio: over paired seeds, where every value is positive the geometric mean of A / B with the t interval of the paired "
        "log-ratios (times and memory are skewed; their logs are near normal), else mean(A) / mean(B) with Fieller's interval "
        "(t, n − 1 df: valid at any n ≥ 2, as a bootstrap of so few seeds is not); "
        "scaling: log-log least-squares slope over every ok run, t interval",
        fixed_paired, a.options.alpha));
  if (!a.studies.empty())
    tab.notes.push_back(fmt::format(
        "claims of a sequential study: judged at each look on the seeds below it; the interval is the repeated confidence "
        "interval of the look that decided the claim (or of its last look): t for Δ, t of the log-ratios (or Fieller's) for a "
        "ratio, t for a slope, at the look's α-spending boundary (exact for a t whose variance each look estimates), with Holm across the study's better / not-worse claims at α = {} (the looks table below)",
        a.options.alpha));
  if (std::any_of(a.claims.begin(), a.claims.end(), [](const ClaimResult& r) { return r.claim.kind == ClaimKind::Dominates; }))
    tab.notes.push_back("dominates: two halves, each judged as its kind is — not worse on the metric within the margin (a "
                        "better / not-worse claim in the Holm family) and the cost ratio A / B ≤ 1 / factor (judged as a "
                        "ratio claim; an exact cost decides at once); supported when both are, refuted when "
                        "either is, else inconclusive; the evidence shows the metric half, then the cost half");
  if (std::any_of(a.claims.begin(), a.claims.end(), [](const ClaimResult& r) { return r.claim.kind == ClaimKind::Variance; }))
    tab.notes.push_back("variance: V(S), the variance a study varying only the streams S would see (the sum of the crossed "
                        "design's components over the terms that involve them), over V of the streams 'against' (all: every "
                        "stream the cell varies), on A's values or A − B paired on the stream tuple; generalized interval of the "
                        "ratio (each mean square's pivot df·MS / χ²; coverage checked by simulation, docs/claims-and-studies.md; at most 1 where the streams of 'of' are among those of 'against'); n: values");
  tab.notes.push_back("supported: the interval lies wholly in the claimed region; refuted: wholly outside it; inconclusive: it "
                      "straddles the edge; not tested: a cell has no value; not yet judged: a running study's claim no look has "
                      "tested yet; (↑) higher is better, (↓) lower is better");
  if (std::any_of(tab.rows.begin(), tab.rows.end(), [](const std::vector<TableCell>& row) { return row[3].caution; }))
    tab.notes.push_back(fmt::format("{} n < {}: few seeds; the t intervals hold at this n if the per-seed differences are "
                                    "near normal, which so few seeds cannot show",
                                    kCautionMark, kMinBootstrapN));
  tab.notes.push_back("an exact figure on the threshold (no spread): a tie is not better (refuted); at the margin is not worse "
                      "(supported)");
  for (const auto& r : a.claims) {
    std::string note = r.claim.name + ": " + r.why;
    if (const std::string need = seeds_needed_text(r); !need.empty()) note += "; " + need;
    tab.notes.push_back(note);
    for (const auto& n : r.notes) tab.notes.push_back(r.claim.name + ": " + n);
  }
  return tab;
}

namespace {

// One row per look of a claim (a dominates claim: of each half).
void add_look_rows(Table& tab, const ClaimResult& r) {
  for (const auto& l : r.looks) {
    std::vector<TableCell> row;
    row.push_back(text(r.claim.name));
    row.push_back(count(l.look));
    row.push_back(count(static_cast<std::size_t>(l.seeds)));
    row.push_back(count(l.n));
    row.push_back(l.estimate ? number(*l.estimate, claim_number(r, *l.estimate)) : text("–"));
    row.push_back(l.interval ? number(l.interval->lo, "[" + claim_number(r, l.interval->lo) + ", " + claim_number(r, l.interval->hi) + "]")
                             : text("–"));
    row.push_back(l.interval ? number(l.confidence, confidence_text(l.confidence, true)) : text("–"));
    row.push_back(l.z_boundary ? number(*l.z_boundary, fmt::format("{:.3f}", *l.z_boundary))
                               : text(l.interval ? "exact" : "–"));
    row.push_back(number(l.alpha, fmt::format("{:.4g}", l.alpha)));
    row.push_back(text(verdict_name(l.verdict)));
    row.back().best = l.verdict == Verdict::Supported;
    row.back().alert = l.verdict == Verdict::Refuted || l.verdict == Verdict::NotTested;
    tab.rows.push_back(std::move(row));
  }
}

}  // namespace

// A sequential study's claims, look by look: what each look read, its repeated interval at
// the look's boundary, and what it decided; then why the study stopped for each claim.
Table claim_looks_table(const Analysis& a) {
  Table tab;
  tab.id = "claims-looks";
  tab.title = "claims — looks of the sequential design";
  tab.columns = {"claim", "look", "seeds", "n", "estimate", "repeated interval", "confidence", "|z| boundary", "α share", "verdict"};
  for (const auto& study : a.studies) {
    for (std::size_t i = study.claims_begin; i < study.claims_end; ++i)
      for (const ClaimResult* part : claim_parts(a.claims[i])) add_look_rows(tab, *part);
    std::string budget = study.budget_seconds ? fmt::format("budget {}, {} spent", format_budget(*study.budget_seconds),
                                                            format_budget(study.spent_seconds))
                                              : fmt::format("no budget, {} spent", format_budget(study.spent_seconds));
    const std::string identity = study.study_id.empty() ? "seeds from base_seed alone (begun before studies had an identity)"
                                                        : "study " + study.study_id + ", its seeds its own";
    tab.notes.push_back(fmt::format("{}: seeds = {{ {} }}, looks at {} seeds; {}; {}; {}; {} run(s)", study.sweep, study.design.text(),
                                    fmt::join(study.look_seeds, ", "), identity, budget, study.plan.summary, study.runs));
    for (std::size_t i = study.claims_begin; i < study.claims_end; ++i)
      tab.notes.push_back(a.claims[i].claim.name + ": " + a.claims[i].stopped);
  }
  tab.notes.push_back(
      "each look reads the seeds below its count; its interval is the repeated confidence interval at the look's "
      "O'Brien–Fleming-shaped α-spending boundary (Lan–DeMets), so a claim may be decided at any look without inflating "
      "false verdicts; α share: the claim's part of the study's α (Holm's procedure in its sequential form for better and "
      "not-worse claims); exact figures are decided at the first look");
  return tab;
}

// What settling each open claim would cost (study_plan.h).
namespace {

// A claim whose pairs cross random streams: how many levels of each it would take.
std::string levels_note(const std::string& claim, const ClaimPlan& p) {
  std::vector<std::string> sources, levels;
  const auto needed = [](const std::optional<std::int64_t>& n) { return n ? std::to_string(*n) : std::string("more than 100000"); };
  for (const auto& s : p.levels_by_source) {
    sources.push_back(s.source);
    levels.push_back(std::to_string(s.now));
  }
  std::string out = fmt::format("{}: its pairs cross {} at {} levels; for 80 % power at its level (normal approximation, from the "
                                "variance components of its paired values): ",
                                claim, join(sources, " x "), join(levels, " x "));
  for (std::size_t i = 0; i < p.levels_by_source.size(); ++i)
    out += fmt::format("{}{} {} levels", i ? ", " : "", p.levels_by_source[i].source, needed(p.levels_by_source[i].needed));
  return out + fmt::format(" (each with the others as now), or every source at {} levels", needed(p.levels_each));
}

}  // namespace

std::optional<Table> claim_plan_table(const Analysis& a) {
  if (a.plans.empty()) return std::nullopt;
  Table tab;
  tab.id = "claims-plan";
  tab.title = "claims — what settling the open ones would cost";
  tab.columns = {"claim", "design", "seeds so far", "effect", "fixed: seeds for 80 %", "sequential: expected seeds",
                 "sequential: power", "run time (fixed / sequential)", "wall time (fixed / sequential)"};
  std::vector<std::string> levels_notes;
  auto hours = [](const std::optional<double>& h) {
    if (!h) return std::string("–");
    if (*h * 60 < 1) return std::string("<1 min");
    if (*h < 1) return fmt::format("{:.0f} min", *h * 60);
    return fmt::format("{:.1f} h", *h);
  };
  for (const auto& [i, p] : a.plans) {
    const ClaimResult& r = a.claims[i];
    std::vector<TableCell> row;
    row.push_back(text(r.claim.name + (p.half.empty() ? "" : " (" + p.half + " half)")));
    row.push_back(text(p.design.text() + (p.assumed_design ? " (assumed)" : "")));
    row.push_back(count(p.seeds_done));
    if (!p.why_not.empty()) {
      row.push_back(text(p.why_not));
      for (int k = 0; k < 5; ++k) row.push_back(text("–"));
      tab.rows.push_back(std::move(row));
      continue;
    }
    row.push_back(p.effect ? number(*p.effect, fmt::format("{:+.3f}", *p.effect)) : text("–"));
    row.push_back(p.fixed_seeds ? count(*p.fixed_seeds) : text("> 100000"));
    row.push_back(p.sequential_seeds ? number(*p.sequential_seeds, fmt::format("{:.1f}", *p.sequential_seeds)) : text("–"));
    row.push_back(p.sequential_power ? number(*p.sequential_power, fmt::format("{:.2f}", *p.sequential_power)) : text("–"));
    row.push_back(text(hours(p.fixed_run_hours) + " / " + hours(p.sequential_run_hours)));
    row.push_back(text(hours(p.fixed_wall_hours) + " / " + hours(p.sequential_wall_hours) + fmt::format(" ({} at a time)", p.slots)));
    tab.rows.push_back(std::move(row));
    if (!p.levels_by_source.empty()) levels_notes.push_back(levels_note(r.claim.name, p));
  }
  tab.notes.push_back("effect: (estimate − threshold) / sd per seed (ratio claims: of A − r·B at the nearer bound); fixed: the "
                      "paired seeds a fixed design needs for 80 % power at the claim's level; sequential: the seeds the design is "
                      "expected to spend at the observed effect, and its chance of deciding by max (normal approximation); "
                      "run and wall time: still to spend, from the median run time of the claim's cells (run time: summed over runs; "
                      "wall time: with as many runs at a time as the study ran); design (assumed): a pilot, or a study that reached "
                      "its max, planned as a new study of that design (--max, --step). What is valid: a study in progress goes "
                      "on in its own folder (the same `lrbench run`); a new study runs into another --out folder, where it takes a "
                      "new identity (DIR/study.json) and draws seeds nobody has looked at; the seeds read here decided what this "
                      "report shows and are never a new study's evidence (`--study-id` replays a study's seeds: a reproduction, "
                      "not a new study)");
  for (auto& n : levels_notes) tab.notes.push_back(std::move(n));
  return tab;
}

}  // namespace lrb
