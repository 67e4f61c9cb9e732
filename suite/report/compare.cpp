#include "suite/report/compare.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <unordered_map>

#include "suite/contracts/figure_key.h"
#include "suite/contracts/figures.h"
#include "suite/core/errors.h"
#include "suite/core/text.h"
#include "suite/core/version.h"
#include "suite/report/cells.h"
#include "suite/report/run_provenance.h"
#include "suite/report/table_cells.h"
#include "suite/stats/equivalence.h"
#include "suite/stats/multiple_testing.h"
#include "suite/stats/ratio.h"
#include "suite/stats/t_tests.h"
#include "suite/store/run_view.h"

namespace lrb {

using nlohmann::json;

namespace {

// Figures read off a clock: seconds, rates, and the share of the peak the clock's rate is.
bool is_time_figure(const FigureDef* f) {
  return f && (f->unit == FigureUnit::Seconds || f->unit == FigureUnit::Rate || f->name == "flop_utilisation");
}

// The catalogue's entry of a figure named as tables name it ("accuracy") or as stored
// ("eval_accuracy", "peak_step_bytes"); `stored` is the name runs record it under.
const FigureDef* figure_named(const std::string& name, std::string* stored) {
  const FigureDef* f = find_figure(name);
  if (f && (!f->task_metric || FigureKey::parse(name).kind == FigureKey::Kind::TaskMetric)) {
    *stored = name;
    return f;
  }
  const std::string as_task_metric = FigureKey::task_metric(name).stored();
  f = find_figure(as_task_metric);
  if (f && f->task_metric) {
    *stored = as_task_metric;
    return f;
  }
  return nullptr;
}

std::string shown_value(const std::string& figure, double v) {
  const FigureDef* f = find_figure(figure);
  switch (f ? f->unit : FigureUnit::Plain) {
    case FigureUnit::Bytes: return format_bytes(v);
    case FigureUnit::Seconds: return format_seconds(v);
    case FigureUnit::Rate: return format_rate(v);
    case FigureUnit::Count: return format_count(v);
    case FigureUnit::Share:
    case FigureUnit::Plain: break;
  }
  return format_value(v);
}

std::string margin_text(const CompareMargin& m, const std::string& figure) {
  return m.relative ? fmt::format("±{:g} %", m.value * 100) : "±" + shown_value(figure, m.value);
}

// Where each run of a side sits: its cell's task, entrant and setting.
struct CellName {
  std::string task, entrant, setting;  // setting: what varies besides the model (seq_len, lr)
};

std::unordered_map<std::string, CellName> cell_names(const std::vector<RunRecord>& runs) {
  std::unordered_map<std::string, CellName> out;
  for (const Cell& c : group_cells(runs, "")) {
    const CellName name{c.task, c.entrant, c.condition_label};  // the entrant names the model's options
    for (const std::string& k : c.run_keys) out.emplace(k, name);
    for (const RunProblem& p : c.problems) out.emplace(p.run, name);
  }
  for (const RunRecord& r : runs)  // a run no cell kept (a duplicate seed): named by its spec
    out.emplace(r.key, CellName{r.view().task.empty() ? "?" : r.view().task, r.view().model.empty() ? "?" : r.view().model, ""});
  return out;
}


std::string run_label(const RunRecord& r, const CellName& c) {
  std::string s = c.task + " " + c.entrant;
  if (!c.setting.empty()) s += " " + c.setting;
  return s + " " + r.view().seed_label + " (" + r.key.substr(0, 12) + ")";
}

// One cell's values of one figure, paired by run.
struct Pairs {
  CellName cell;
  std::string figure;
  std::vector<double> before, after;
  bool exact_on_cpu = true;  // every run of both sides on a CPU
};

bool bit_identical(const Pairs& p) {
  for (std::size_t i = 0; i < p.before.size(); ++i)
    if (std::memcmp(&p.before[i], &p.after[i], sizeof(double)) != 0) return false;
  return true;
}

FigureChange judge(const Pairs& p, const CompareOptions& o) {
  FigureChange c;
  c.task = p.cell.task;
  c.entrant = p.cell.entrant;
  c.setting = p.cell.setting;
  c.figure = p.figure;
  c.pairs = p.before.size();
  c.before = stats::mean(p.before);
  c.after = stats::mean(p.after);
  const FigureDef* def = find_figure(p.figure);
  const bool time = is_time_figure(def);
  c.kind = def && def->exact_on_cpu && p.exact_on_cpu ? "exact" : time ? "time" : "sampled";
  if (bit_identical(p)) {
    c.change = Change::Identical;
    c.estimate = time ? 1.0 : 0.0;
    c.why = c.pairs == 1 ? "the same value, bit for bit" : fmt::format("the same on all {} seeds, bit for bit", c.pairs);
    return c;
  }
  if (c.kind == "exact") {
    c.change = Change::Changed;
    c.estimate = c.after - c.before;
    c.why = "an exact count moved: " + shown_value(p.figure, c.before) + " → " + shown_value(p.figure, c.after) +
            " (a change of the code that counts it, or of what is counted)";
    return c;
  }
  const auto named = o.margins.find(p.figure);
  c.margin = named != o.margins.end() ? named->second : default_margin(p.figure);
  std::vector<double> diff(c.pairs);
  for (std::size_t i = 0; i < c.pairs; ++i) diff[i] = p.after[i] - p.before[i];
  c.estimate = time ? (c.before != 0 ? std::optional<double>(c.after / c.before) : std::nullopt) : c.after - c.before;
  if (c.pairs < 2) {
    c.why = "one paired seed: no spread to judge a change by";
    return c;
  }
  const stats::TTest t = stats::t_test_one_sample(diff, 1 - o.alpha);
  c.p_change = t.p_value;
  if (time) {
    if (t.df) c.interval = stats::fieller_paired_ratio(p.after, p.before, stats::t_critical(1 - o.alpha, *t.df));
    const double m = c.margin->value;
    if (c.before > 0 && std::all_of(p.before.begin(), p.before.end(), [](double v) { return v > 0; }))
      c.p_equivalence = stats::tost_paired_ratio(p.after, p.before, 1 / (1 + m), 1 + m).p_value;
  } else {
    c.interval = t.ci;
    const double m = c.margin->relative ? c.margin->value * std::fabs(c.before) : c.margin->value;
    if (m > 0) c.p_equivalence = stats::tost_paired(p.after, p.before, -m, m).p_value;
  }
  return c;
}

// After the adjustment over every tested figure: the verdict and its reason.
void decide(FigureChange& c, double alpha) {
  if (c.change != Change::Inconclusive || !c.p_change) return;
  const bool time = c.kind == "time";
  const std::string estimate = !c.estimate ? "–" : time ? fmt::format("×{:.4g}", *c.estimate) : format_signed(*c.estimate);
  const std::string interval = c.interval ? " " + format_interval(*c.interval) : "";
  const std::string margin = margin_text(*c.margin, c.figure);
  if (c.p_equivalence && *c.p_equivalence < alpha) {
    c.change = Change::Unchanged;
    c.why = fmt::format("within {}: two one-sided tests p = {}", margin, format_p(*c.p_equivalence));
    if (c.p_adjusted && *c.p_adjusted < alpha) c.why += " (a difference, " + estimate + ", smaller than the margin)";
    return;
  }
  if (c.p_adjusted && *c.p_adjusted < alpha) {
    const double moved = c.after - c.before;
    const Direction d = figure_direction(c.figure);
    c.change = d == Direction::None ? Change::Changed
               : (moved > 0) == (d == Direction::Higher) ? Change::Improved
                                                          : Change::Regressed;
    c.why = fmt::format("{}{}, p (BH) = {}", estimate, interval, format_p(*c.p_adjusted));
    if (c.change == Change::Changed) c.why += "; the figure has no better side";
    return;
  }
  c.why = fmt::format("{}{}: neither within {} (p = {}) nor a clear change (p (BH) = {}); more seeds, or a wider margin",
                      estimate, interval, margin, c.p_equivalence ? format_p(*c.p_equivalence) : std::string("–"),
                      c.p_adjusted ? format_p(*c.p_adjusted) : std::string("–"));
}

FigureChange status_change(const RunRecord& b, const RunRecord& a, const CellName& cell) {
  FigureChange c;
  c.task = cell.task;
  c.entrant = cell.entrant;
  c.setting = cell.setting;
  c.figure = "status";
  c.kind = "status";
  c.pairs = 1;
  c.change = a.status == RunStatus::Ok ? Change::Improved : b.status == RunStatus::Ok ? Change::Regressed : Change::Changed;
  c.why = fmt::format("{}: {} → {}", b.view().seed_label, status_name(b.status), status_name(a.status));
  const std::string& reason = a.status != RunStatus::Ok ? a.error : b.error;
  if (!reason.empty()) c.why += " (" + reason + ")";
  return c;
}


}  // namespace

CompareMargin default_margin(const std::string& stored_figure) {
  const FigureDef* f = find_figure(stored_figure);
  if (is_time_figure(f)) return {0.05, true};
  // A task's score (accuracy, F1: a fraction) or a share: half a point.
  if (f && (f->task_metric || f->unit == FigureUnit::Share)) return {0.005, false};
  return {0.01, true};
}

std::pair<std::string, CompareMargin> parse_margin(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw UserError("--margin " + text + ": give FIGURE=VALUE, e.g. accuracy=0.005 or step_seconds_median=5%");
  const std::string name = text.substr(0, eq);
  std::string value = text.substr(eq + 1);
  std::string stored;
  const FigureDef* f = figure_named(name, &stored);
  if (!f) throw UserError("--margin " + text + ": no figure '" + name + "' in the catalogue; name one as the tables do (accuracy, peak_step_bytes, step_seconds_median)");
  CompareMargin m;
  m.relative = !value.empty() && value.back() == '%';
  if (m.relative) value.pop_back();
  std::size_t used = 0;
  try {
    m.value = std::stod(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != value.size() || !std::isfinite(m.value) || m.value <= 0)
    throw UserError("--margin " + text + ": the margin must be a positive number, absolute in the figure's unit or a percentage (5%)");
  if (m.relative) m.value /= 100;
  if (is_time_figure(f) && !m.relative)
    throw UserError("--margin " + text + ": " + name + " is a time figure, compared as a ratio; give its margin as a percentage (" + name + "=5%)");
  return {stored, m};
}

const char* change_name(Change c) {
  switch (c) {
    case Change::Identical: return "identical";
    case Change::Changed: return "changed";
    case Change::Unchanged: return "unchanged";
    case Change::Improved: return "improved";
    case Change::Regressed: return "regressed";
    case Change::Inconclusive: break;
  }
  return "inconclusive";
}

std::size_t Comparison::moved() const {
  return static_cast<std::size_t>(std::count_if(changes.begin(), changes.end(), [](const FigureChange& f) {
    return f.kind != "time" && f.change != Change::Identical;
  }));
}

std::size_t Comparison::count(Change c) const {
  return static_cast<std::size_t>(std::count_if(changes.begin(), changes.end(), [c](const FigureChange& f) { return f.change == c; }));
}

namespace {

using RunPair = std::pair<const RunRecord*, const RunRecord*>;  // before, after

// Per cell and figure, the values of the runs ok on both sides (in the before side's order),
// each judged, then the verdicts given after one adjustment over every figure tested; a run
// whose status changed is a change of its own.
void judge_figures(const std::vector<RunPair>& paired, const std::unordered_map<std::string, CellName>& names,
                   const CompareOptions& options, std::vector<FigureChange>& changes) {
  std::map<std::tuple<std::string, std::string, std::string, std::string>, Pairs> by_cell;
  for (const auto& [b, a] : paired) {
    const CellName& cell = names.at(b->key);
    if (b->status != a->status) {
      changes.push_back(status_change(*b, *a, cell));
      continue;
    }
    if (b->status != RunStatus::Ok) continue;
    const bool on_cpu = b->gpu_name().empty() && a->gpu_name().empty();
    for (const auto& [figure, vb] : b->metrics) {
      const auto va = a->metrics.find(figure);
      if (va == a->metrics.end() || !std::isfinite(vb) || !std::isfinite(va->second)) continue;
      Pairs& p = by_cell[{cell.task, cell.entrant, cell.setting, figure}];
      p.cell = cell;
      p.figure = figure;
      p.before.push_back(vb);
      p.after.push_back(va->second);
      p.exact_on_cpu = p.exact_on_cpu && on_cpu;
    }
  }
  const std::size_t first_figure = changes.size();
  for (const auto& [key, p] : by_cell) changes.push_back(judge(p, options));
  // Benjamini–Hochberg over every figure tested: where nothing changed, the chance of any
  // improved or regressed among the many figures and cells is α at most, not α per figure
  // (every null true: the false discovery rate is the family-wise rate); where a change moves
  // many figures (a faster kernel moves every time figure), it finds them with far fewer
  // seeds than Holm's step-down would need.
  std::vector<std::size_t> tested;
  std::vector<double> p;
  for (std::size_t i = first_figure; i < changes.size(); ++i)
    if (changes[i].change == Change::Inconclusive && changes[i].p_change) {
      tested.push_back(i);
      p.push_back(*changes[i].p_change);
    }
  const std::vector<double> adjusted = stats::benjamini_hochberg(p);
  for (std::size_t j = 0; j < tested.size(); ++j) changes[tested[j]].p_adjusted = adjusted[j];
  for (FigureChange& c : changes) decide(c, options.alpha);
}

// What the paired runs' provenance records differently on the two sides; whether the
// machines (processor, GPU, threads) differ.
bool provenance_differences(const std::vector<RunPair>& paired, std::vector<ProvenanceDifference>& out) {
  bool machines_differ = false;
  for (const std::string& key : result_provenance_keys()) {
    std::set<std::string> vb, va;
    for (const auto& [b, a] : paired) {
      vb.insert(provenance_text(b->provenance, key));
      va.insert(provenance_text(a->provenance, key));
    }
    if (vb == va) continue;
    out.push_back({key, {vb.begin(), vb.end()}, {va.begin(), va.end()}});
    machines_differ = machines_differ || key == "cpu" || key == "gpu" || key == "threads";
  }
  return machines_differ;
}

}  // namespace

Comparison compare_results(const ReportInput& before, const ReportInput& after, const CompareOptions& options) {
  Comparison out;
  out.before_source = join(before.sources, ", ");
  out.after_source = join(after.sources, ", ");
  out.alpha = options.alpha;
  std::unordered_map<std::string, const RunRecord*> after_by_key;
  for (const RunRecord& r : after.runs) after_by_key.emplace(r.key, &r);
  std::vector<RunPair> paired;
  std::set<std::string> before_keys;
  for (const RunRecord& r : before.runs) {
    before_keys.insert(r.key);
    if (const auto it = after_by_key.find(r.key); it != after_by_key.end()) paired.emplace_back(&r, it->second);
  }
  out.paired = paired.size();
  if (paired.empty())
    throw UserError(out.before_source + " and " + out.after_source +
                    " share no run: their run keys differ (another sweep, other settings or another base_seed). Compare the "
                    "results of one sweep file run twice, by two builds or on two machines");
  const auto before_names = cell_names(before.runs);
  const auto after_names = cell_names(after.runs);
  for (const RunRecord& r : before.runs)
    if (!after_by_key.count(r.key)) out.only_before.push_back(run_label(r, before_names.at(r.key)));
  for (const RunRecord& r : after.runs)
    if (!before_keys.count(r.key)) out.only_after.push_back(run_label(r, after_names.at(r.key)));

  judge_figures(paired, before_names, options, out.changes);
  const bool machines_differ = provenance_differences(paired, out.provenance);
  const bool timed = std::any_of(out.changes.begin(), out.changes.end(), [](const FigureChange& c) { return c.kind == "time"; });
  if (machines_differ && timed)
    out.warnings.push_back("the sides ran on different machines or thread counts (see what differs): a time figure's ratio "
                           "measures the machines as much as the builds; compare builds on one machine (`lrbench ab`)");
  if (!out.only_before.empty() || !out.only_after.empty())
    out.warnings.push_back(fmt::format("{} run(s) only in {}, {} only in {}: listed, not compared", out.only_before.size(),
                                       out.before_source, out.only_after.size(), out.after_source));
  for (const auto* in : {&before, &after})
    if (!in->bad.empty())
      out.warnings.push_back(fmt::format("{} bad file(s) in {} count as missing", in->bad.size(), join(in->sources, ", ")));
  return out;
}

namespace {

json interval_json(const std::optional<stats::Interval>& i) { return i ? json::array({i->lo, i->hi}) : json(); }
json optional_json(const std::optional<double>& v) { return v ? json(*v) : json(); }

json comparison_json(const Comparison& c) {
  json changes = json::array();
  for (const FigureChange& f : c.changes) {
    json margin;
    if (f.margin) margin = {{"value", f.margin->value}, {"relative", f.margin->relative}};
    changes.push_back({{"task", f.task}, {"entrant", f.entrant}, {"setting", f.setting}, {"figure", f.figure},
                       {"kind", f.kind}, {"pairs", f.pairs}, {"before_mean", f.before}, {"after_mean", f.after},
                       {"estimate", optional_json(f.estimate)}, {"interval", interval_json(f.interval)},
                       {"margin", margin}, {"p_change", optional_json(f.p_change)}, {"p_adjusted", optional_json(f.p_adjusted)},
                       {"p_equivalence", optional_json(f.p_equivalence)}, {"change", change_name(f.change)}, {"why", f.why}});
  }
  json provenance = json::array();
  for (const auto& d : c.provenance) provenance.push_back({{"what", d.what}, {"before", d.before}, {"after", d.after}});
  json summary = json::object();
  for (Change k : {Change::Identical, Change::Changed, Change::Unchanged, Change::Improved, Change::Regressed, Change::Inconclusive})
    summary[change_name(k)] = c.count(k);
  return {{"schema_version", 1}, {"kind", "compare"},
          {"generated_by", {{"lrbench_version", lrbench_version()}, {"git_revision", git_revision()}, {"git_dirty", git_dirty()}}},
          {"before", c.before_source}, {"after", c.after_source}, {"alpha", c.alpha},
          {"paired_runs", c.paired}, {"summary", summary}, {"changes", changes}, {"provenance", provenance},
          {"only_before", c.only_before}, {"only_after", c.only_after}, {"warnings", c.warnings}};
}

}  // namespace

Report comparison_report(const Comparison& c) {
  using namespace table_cells;
  Report r;
  r.title = "lrbench compare: " + c.before_source + " → " + c.after_source;
  Table summary{"compare-summary", fmt::format("{} run(s) paired by key: figures by verdict", c.paired), {"verdict", "figures"}};
  if (c.provenance.empty()) summary.notes.push_back("the paired runs recorded the same revision, libraries, BLAS core, processor and threads");
  if (!c.provenance.empty()) {
    Table prov{"compare-provenance", "What differs between the sides' runs", {"provenance", "before", "after"}};
    for (const auto& d : c.provenance) prov.rows.push_back({text(d.what), text(join(d.before, ", ")), text(join(d.after, ", "))});
    r.tables.push_back(std::move(prov));
  }
  for (Change k : {Change::Regressed, Change::Improved, Change::Changed, Change::Inconclusive, Change::Unchanged, Change::Identical}) {
    TableCell n = count(c.count(k), k == Change::Regressed);
    summary.rows.push_back({text(change_name(k)), n});
  }
  r.tables.push_back(std::move(summary));

  Table t{"compare-changes", "Each cell's figures, before → after",
          {"task", "entrant", "setting", "figure", "seeds", "before", "after", "change", "interval", "margin", "p (BH)",
           "p (within margin)", "verdict", "why"}};
  for (const FigureChange& f : c.changes) {
    const bool ratio = f.kind == "time";
    TableCell change = !f.estimate ? text("–")
                       : ratio     ? number(*f.estimate, fmt::format("×{:.4g}", *f.estimate))
                                   : number(*f.estimate, format_signed(*f.estimate));
    TableCell verdict = text(change_name(f.change));
    verdict.alert = f.change == Change::Regressed;
    const bool status = f.kind == "status";
    t.rows.push_back({text(f.task), text(f.entrant), text(f.setting), text(display_metric(f.figure)), count(f.pairs),
                      status ? text("–") : number(f.before, shown_value(f.figure, f.before)),
                      status ? text("–") : number(f.after, shown_value(f.figure, f.after)), change,
                      interval(f.interval, f.pairs), text(f.margin ? margin_text(*f.margin, f.figure) : "–"),
                      f.p_adjusted ? number(*f.p_adjusted, format_p(*f.p_adjusted)) : text("–"),
                      f.p_equivalence ? number(*f.p_equivalence, format_p(*f.p_equivalence)) : text("–"), verdict,
                      text(f.why)});
  }
  t.notes.push_back(fmt::format(
      "change: after − before; for time figures the ratio mean(after) / mean(before). interval: the paired t interval at "
      "{:g} % (Fieller's for a ratio). unchanged: two one-sided tests put the change within the margin at α = {:g}; "
      "improved / regressed: the paired t-test, adjusted over every figure (Benjamini–Hochberg), clears 0 on the figure's better / worse "
      "side; identical: bit for bit on every seed; changed: an exact count moved, or a figure without a better side",
      100 * (1 - c.alpha), c.alpha));
  r.tables.push_back(std::move(t));

  if (!c.only_before.empty() || !c.only_after.empty()) {
    Table one{"compare-one-side", "Runs found on one side only", {"side", "run"}};
    for (const auto& s : c.only_before) one.rows.push_back({text("before"), text(s)});
    for (const auto& s : c.only_after) one.rows.push_back({text("after"), text(s)});
    r.tables.push_back(std::move(one));
  }
  r.warnings = c.warnings;
  r.make_data = [data = comparison_json(c)] { return data; };
  return r;
}

}  // namespace lrb
