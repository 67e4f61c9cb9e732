#include "suite/report/analysis.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>

#include "suite/contracts/figure_key.h"
#include "suite/core/errors.h"
#include "suite/core/parallel_for.h"
#include "suite/core/text.h"
#include "suite/report/efficiency.h"

namespace lrb {
namespace {

stats::SeedValues seed_values(const Cell& c) {
  stats::SeedValues v;
  for (const auto& sv : c.values) v[sv.seed] = sv.value;
  return v;
}

std::vector<double> plain(const std::vector<SeedValue>& v) {
  std::vector<double> out;
  for (const auto& sv : v) out.push_back(sv.value);
  return out;
}

std::string unit_label(const std::string& task, const std::string& condition_label) {
  return condition_label.empty() ? task : task + " " + condition_label;
}

// Units: consecutive cells of one (task, condition); group_cells sorted them so.
std::vector<Unit> make_units(std::vector<CellResult>& cells) {
  std::vector<Unit> units;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const Cell& c = cells[i].cell;
    if (units.empty() || units.back().task != c.task || units.back().condition != c.condition) {
      Unit u;
      u.task = c.task;
      u.condition = c.condition;
      u.condition_label = c.condition_label;
      u.label = unit_label(c.task, c.condition_label);
      units.push_back(std::move(u));
    }
    units.back().cells.push_back(i);
    cells[i].unit = units.size() - 1;
  }
  return units;
}

stats::RankingSettings ranking_settings(const ReportOptions& o, bool higher_is_better) {
  stats::RankingSettings s;
  s.higher_is_better = higher_is_better;
  s.alpha = o.alpha;
  s.correction = o.correction;
  s.bootstrap = o.bootstrap;
  return s;
}

// Ranks a unit's cells with values (tie groups); reorders unit.cells best first.
void rank_unit(Unit& unit, std::vector<CellResult>& cells, const ReportOptions& o) {
  std::map<std::string, stats::SeedValues> models;
  std::map<std::string, std::size_t> cell_of;
  std::vector<std::size_t> unranked;
  for (std::size_t i : unit.cells) {
    if (cells[i].cell.values.empty()) {
      unranked.push_back(i);
      continue;
    }
    std::string name = cells[i].cell.entrant;
    for (int k = 2; cell_of.count(name); ++k) name = cells[i].cell.entrant + " (" + std::to_string(k) + ")";
    models[name] = seed_values(cells[i].cell);
    cell_of[name] = i;
  }
  std::vector<std::size_t> order;
  if (!models.empty()) {
    const bool hib = cells[unit.cells.front()].higher_is_better;
    const stats::TaskRanking r = stats::rank_task(unit.label, models, ranking_settings(o, hib));
    for (const auto& m : r.models) {
      const std::size_t i = cell_of.at(m.model);
      cells[i].rank = m;
      cells[i].rank->model = cells[i].cell.entrant;
      order.push_back(i);
    }
  }
  order.insert(order.end(), unranked.begin(), unranked.end());
  unit.cells = std::move(order);
}

// The baseline's cell in a unit: an exact entrant match, else the one cell of that model.
std::optional<std::size_t> find_baseline(const Unit& unit, const std::vector<CellResult>& cells, const std::string& baseline) {
  for (std::size_t i : unit.cells)
    if (cells[i].cell.entrant == baseline) return i;
  std::vector<std::size_t> same_model;
  for (std::size_t i : unit.cells)
    if (cells[i].cell.model == baseline) same_model.push_back(i);
  if (same_model.size() > 1) {
    std::vector<std::string> names;
    for (std::size_t i : same_model) names.push_back("'" + cells[i].cell.entrant + "'");
    throw UserError("--baseline '" + baseline + "' matches " + std::to_string(same_model.size()) + " variants on " +
                    unit.label + " (" + join(names, ", ") + "); name one of them, e.g. --baseline " + names.front());
  }
  if (same_model.empty()) return std::nullopt;
  return same_model.front();
}

void adjust_family(std::vector<ComparisonResult>& comparisons, const std::vector<std::size_t>& family, const ReportOptions& o) {
  std::vector<std::optional<double>> pt, pw;
  for (std::size_t i : family) {
    pt.push_back(comparisons[i].paired.t.p_value);
    pw.push_back(comparisons[i].paired.wilcoxon.p_value);
  }
  const auto holm = stats::adjust(pt, stats::Correction::kHolm);
  const auto bh = stats::adjust(pt, stats::Correction::kBenjaminiHochberg);
  const auto wholm = stats::adjust(pw, stats::Correction::kHolm);
  const auto wbh = stats::adjust(pw, stats::Correction::kBenjaminiHochberg);
  for (std::size_t k = 0; k < family.size(); ++k) {
    ComparisonResult& c = comparisons[family[k]];
    c.p_holm = holm[k];
    c.p_bh = bh[k];
    c.p_wilcoxon_holm = wholm[k];
    c.p_wilcoxon_bh = wbh[k];
    c.p_shown = o.correction == stats::Correction::kBenjaminiHochberg ? c.p_bh
                : o.correction == stats::Correction::kHolm            ? c.p_holm
                                                                      : c.paired.t.p_value;
    c.significant = c.p_shown && *c.p_shown <= o.alpha;
  }
}

void fit_scaling(Analysis& a, TaskResult& task) {
  struct Group {
    std::string model, entrant, condition_label;
    nlohmann::json condition;
    std::vector<std::size_t> cells;
  };
  std::map<std::string, Group> groups;
  for (std::size_t u : task.units)
    for (std::size_t i : a.units[u].cells) {
      const Cell& c = a.cells[i].cell;
      Group& g = groups[c.entrant + "\n" + c.condition_without_seq_len.dump()];
      g.model = c.model;
      g.entrant = c.entrant;
      g.condition = c.condition_without_seq_len;
      g.condition_label = label_of(c.condition_without_seq_len);
      g.cells.push_back(i);
    }
  for (const auto& [key, g] : groups) {
    for (const auto& metric : scaling_metrics()) {
      ScalingResult s;
      s.task = task.task;
      s.model = g.model;
      s.entrant = g.entrant;
      s.condition = g.condition;
      s.condition_label = g.condition_label;
      s.metric = metric;
      std::set<std::int64_t> lengths;
      bool positive = true;
      for (std::size_t i : g.cells) {
        const Cell& c = a.cells[i].cell;
        auto it = c.efficiency.find(metric);
        if (it == c.efficiency.end()) continue;
        for (const auto& sv : it->second) {
          s.points.emplace_back(static_cast<double>(c.seq_len), sv.value);
          lengths.insert(c.seq_len);
          positive = positive && sv.value > 0 && c.seq_len > 0;
        }
      }
      s.lengths = lengths.size();
      if (s.lengths < 3) continue;
      if (!positive) {
        task.warnings.push_back(fmt::format("{}: no scaling fit of {} for {}: a value is not positive (log-log needs > 0)",
                                            task.task, metric, g.entrant));
        continue;
      }
      std::vector<double> x, y;
      for (const auto& [px, py] : s.points) {
        x.push_back(px);
        y.push_back(py);
      }
      s.fit = stats::fit_power_law(x, y, a.options.bootstrap.confidence);
      task.scaling.push_back(a.scaling.size());
      a.scaling.push_back(std::move(s));
    }
  }
}

void task_warnings(const Analysis& a, TaskResult& t) {
  std::set<int> threads, budget_threads;
  std::set<std::string> revisions, devices, budget_devices;
  std::vector<std::string> n1, small_boot, duplicates, at_chance, same_init;
  std::set<std::string> suspect_peaks;
  for (std::size_t u : t.units)
    for (std::size_t i : a.units[u].cells) {
      const Cell& c = a.cells[i].cell;
      threads.insert(c.threads.begin(), c.threads.end());
      revisions.insert(c.revisions.begin(), c.revisions.end());
      devices.insert(c.devices.begin(), c.devices.end());
      budget_devices.insert(c.budget_devices.begin(), c.budget_devices.end());
      budget_threads.insert(c.budget_threads.begin(), c.budget_threads.end());
      const std::string name = c.entrant + (c.condition_label.empty() ? "" : " " + c.condition_label);
      if (c.same_init) same_init.push_back(name);
      suspect_peaks.insert(c.suspect_peaks.begin(), c.suspect_peaks.end());
      if (c.values.size() == 1) n1.push_back(name);
      else if (c.values.size() >= 2 && c.values.size() < kMinBootstrapN) small_boot.push_back(name);
      for (const auto& d : c.duplicates) duplicates.push_back(name + ": " + d);
      // Accuracy that cannot be told from always answering the commonest class.
      const CellResult& r = a.cells[i];
      if (r.chance && display_metric(c.metric) == "accuracy" && r.summary.mean &&
          (r.summary.t_ci ? r.summary.t_ci->lo <= *r.chance : *r.summary.mean <= *r.chance))
        at_chance.push_back(fmt::format("{} ({:.3f}, chance {:.3f})", name, *r.summary.mean, *r.chance));
    }
  const std::string& task = t.task;
  if (revisions.size() > 1)
    t.warnings.push_back(fmt::format("{}: the table mixes runs from different code revisions ({}); differences may come from the code",
                                     task, fmt::join(revisions, ", ")));
  if (threads.size() > 1)
    t.warnings.push_back(fmt::format("{}: the table mixes thread counts ({}); CPU results are bit-identical only at equal thread counts, and timings differ",
                                     task, fmt::join(threads, ", ")));
  if (devices.size() > 1)
    t.warnings.push_back(fmt::format("{}: the table mixes devices ({}); timings and memory are not comparable across them", task,
                                     fmt::join(devices, ", ")));
  if (budget_devices.size() > 1 || budget_threads.size() > 1)
    t.warnings.push_back(fmt::format("{}: runs trained to a wall-time budget (train.seconds) ran on {} ({}) with {} thread count(s) ({}): "
                                     "their lengths are not comparable (a faster machine trains more steps in the same seconds); "
                                     "compare them at a FLOP or step budget, or on one machine",
                                     task, budget_devices.size() > 1 ? "different devices" : "one device", fmt::join(budget_devices, ", "),
                                     budget_threads.size(), fmt::join(budget_threads, ", ")));
  if (!n1.empty())
    t.warnings.push_back(fmt::format("{}: {} cell(s) with n = 1 ({}): no std and no interval, shown as \"n=1\"", task,
                                     n1.size(), fmt::join(n1, "; ")));
  if (!small_boot.empty())
    t.warnings.push_back(fmt::format("{}: {} cell(s) with n < {}: their bootstrap intervals (‡) undercover, as resampling so few seeds cannot show the spread; read the t interval",
                                     task, small_boot.size(), kMinBootstrapN));
  std::size_t few_pairs = 0;
  for (std::size_t k : t.comparisons) {
    const auto n = a.comparisons[k].paired.n_pairs;
    if (n >= 1 && n < kMinWilcoxonPairs) ++few_pairs;
  }
  if (few_pairs > 0)
    t.warnings.push_back(fmt::format("{}: {} comparison(s) with fewer than {} paired seeds: the Wilcoxon test cannot reach p < 0.05 there",
                                     task, few_pairs, kMinWilcoxonPairs));
  for (const auto& d : duplicates) t.warnings.push_back(task + ": " + d);
  if (!same_init.empty())
    t.warnings.push_back(fmt::format("{}: {} cell(s) whose seeds all start from the weights saved in the model file (same_init = true): "
                                     "their spread leaves out the initialisation's, so intervals and comparisons understate it: {}",
                                     task, same_init.size(), fmt::join(same_init, "; ")));
  if (!suspect_peaks.empty())
    t.warnings.push_back(fmt::format("{}: util rests on a matrix-product peak measured while the cores were busy (provenance "
                                     "matmul_peak.suspect), so it may be overstated: {}; run on idle cores for a sound figure",
                                     task, fmt::join(suspect_peaks, "; ")));
  if (!at_chance.empty())
    t.warnings.push_back(fmt::format("{}: {} cell(s) not clearly above chance (the accuracy's t interval reaches the commonest "
                                     "class's share): {}; comparisons among them compare noise",
                                     task, at_chance.size(), fmt::join(at_chance, "; ")));
}

void rank_overall(Analysis& a) {
  OverallResult& o = a.overall;
  std::set<bool> directions;
  std::map<std::string, std::set<std::size_t>> units_of;  // entrant -> units with a value
  std::vector<std::size_t> units;
  for (std::size_t u = 0; u < a.units.size(); ++u) {
    bool any = false;
    for (std::size_t i : a.units[u].cells)
      if (!a.cells[i].cell.values.empty()) {
        units_of[a.cells[i].cell.entrant].insert(u);
        directions.insert(a.cells[i].higher_is_better);
        any = true;
      }
    if (any) units.push_back(u);
  }
  if (directions.size() > 1) {
    o.why_not = "the tasks' metrics differ in direction (higher and lower is better); rank with one --metric";
    return;
  }
  std::set<std::string> common;
  for (const auto& [entrant, us] : units_of) {
    if (us.size() == units.size()) {
      common.insert(entrant);
      continue;
    }
    std::vector<std::string> missing;
    for (std::size_t u : units)
      if (!us.count(u)) missing.push_back(a.units[u].label);
    o.left_out.push_back(entrant + ": no result on " + join(missing, ", "));
  }
  if (common.size() < 2) {
    o.why_not = "fewer than two models have results on every task and setting";
    return;
  }
  std::vector<stats::TaskScores> scores;
  for (std::size_t u : units) {
    stats::TaskScores ts;
    ts.task = a.units[u].label;
    for (std::size_t i : a.units[u].cells)
      if (common.count(a.cells[i].cell.entrant) && !a.cells[i].cell.values.empty())
        ts.models[a.cells[i].cell.entrant] = seed_values(a.cells[i].cell);
    o.units.push_back(ts.task);
    scores.push_back(std::move(ts));
  }
  o.ranking = stats::rank_across_tasks(scores, ranking_settings(a.options, *directions.begin()));
}

// Each sequential study's claims, judged look by look, with what an open one would cost.
void judge_studies(Analysis& a, const ReportInput& input, const ClaimSettings& cs) {
  // A fixed-design pilot is planned as if it were the first look of a design that goes on
  // in waves of its own size up to 60 seeds (`lrbench plan --max` and --step change it).
  for (std::size_t i = 0; i < a.claims.size(); ++i) {
    const ClaimResult& r = a.claims[i];
    if (r.verdict != Verdict::Inconclusive) continue;
    const std::int64_t n = std::max<std::int64_t>(2, static_cast<std::int64_t>(r.n));
    SequentialSeeds assumed{n, a.options.plan_step > 0 ? a.options.plan_step : n, std::max<std::int64_t>(n, a.options.plan_max)};
    const double level = r.family ? cs.alpha / static_cast<double>(r.family - r.holm_step + 1) : 1.0 - cs.bootstrap.confidence;
    a.plans.emplace(i, plan_claim(r, assumed, true, input.runs, level, cs.power));
  }
  for (const auto& study : input.studies) {
    const bool budget_spent = study.ended == wave_end_name(WavePlan::End::BudgetSpent) ||
                              (study.budget_seconds && study.spent_seconds >= *study.budget_seconds);
    // Only the study's own runs: an earlier version of the sweep in the same folder (its
    // runs are shown in the tables, with a warning) must not count as seeds of a look.
    const std::set<std::string> listed(study.runs.begin(), study.runs.end());
    std::vector<RunRecord> own;
    for (const auto& r : input.runs)
      if (listed.count(r.key)) own.push_back(r);
    StudyJudgement j = judge_sequential_study(study.design, study.claims, own, budget_spent, cs);
    StudySummary s{study.sweep, study.design, j.look_seeds, study.budget_seconds, study.spent_seconds, j.plan, a.claims.size(), 0, 0};
    s.study_id = study.study_id;
    s.runs = own.size();
    if (j.plan.end == WavePlan::End::Running) {
      s.seconds_per_seed = seconds_per_seed_of_open_claims(study.claims, j.plan.open, own);
      if (s.seconds_per_seed && *s.seconds_per_seed > 0 && study.budget_seconds) {
        s.budget_buys_seeds = std::max(0.0, *study.budget_seconds - study.spent_seconds) / *s.seconds_per_seed;
        // The wave in progress already has some of its seeds; the rest of the budget reaches about here.
        const double reach = static_cast<double>(j.plan.looks_done ? j.look_seeds[j.plan.looks_done - 1] : 0) + *s.budget_buys_seeds;
        if (reach < static_cast<double>(study.design.max))
          a.warnings.push_back(fmt::format(
              "{}: at the measured run times the budget left buys about {:.0f} more seed(s) of the open claims' cells, so the study "
              "will end near {:.0f} of its {} seeds; the looks it does not reach spend no error, so its claims lose power: "
              "choose max within what the budget buys (lrbench plan)",
              study.sweep, *s.budget_buys_seeds, reach, study.design.max));
      }
    }
    for (auto& r : j.claims) {
      const std::size_t index = a.claims.size();
      if (r.verdict == Verdict::Inconclusive && !r.looks.empty()) {
        const double level = r.looks.back().alpha > 0 ? r.looks.back().alpha : cs.alpha;
        // A claim that reached max undecided is planned as a new study would go on from it.
        const bool at_max = j.plan.end == WavePlan::End::MaxReached;
        const std::int64_t n = std::max<std::int64_t>(2, static_cast<std::int64_t>(r.n));
        const SequentialSeeds design = at_max ? SequentialSeeds{n, study.design.step, std::max<std::int64_t>(n, a.options.plan_max)}
                                              : study.design;
        a.plans.emplace(index, plan_claim(r, design, at_max, own, level, cs.power));
      }
      a.claims.push_back(std::move(r));
    }
    s.claims_end = a.claims.size();
    a.studies.push_back(std::move(s));
  }
}

// Each cell's values summarised (the bootstraps of all cells at once, sharing draws: most
// of a large report's time), then the units ranked.
void summarise_cells(Analysis& a, const ReportInput& input, const ReportOptions& options) {
  for (auto& c : group_cells(input.runs, options.metric)) {
    CellResult r;
    r.higher_is_better = higher_is_better(c.metric);
    r.cell = std::move(c);
    a.cells.push_back(std::move(r));
  }
  std::vector<std::vector<double>> cell_values(a.cells.size());
  for (std::size_t i = 0; i < a.cells.size(); ++i) cell_values[i] = plain(a.cells[i].cell.values);
  std::vector<stats::BootstrapInterval> cell_bootstraps = stats::bootstrap_means(cell_values, options.bootstrap);
  parallel_for(a.cells.size(), [&](std::size_t i) {
    CellResult& r = a.cells[i];
    r.summary = stats::describe(cell_values[i], std::move(cell_bootstraps[i]));
    for (const auto& [name, v] : r.cell.efficiency) r.efficiency[name] = stats::median(plain(v));
    if (!r.cell.chance.empty()) r.chance = stats::mean(plain(r.cell.chance));
  });
  a.units = make_units(a.cells);
  for (auto& u : a.units) rank_unit(u, a.cells, options);
}

// The comparisons of each unit (against the baseline, or every pair once, the better-ranked
// first: differences read "how much better"), grouped into tasks; each comparison's test
// settings in `settings`. A --baseline found in no unit is a user error.
std::vector<stats::PairedSettings> plan_comparisons(Analysis& a, const ReportOptions& options) {
  bool baseline_found = false;
  std::vector<stats::PairedSettings> settings;  // of a.comparisons[k]
  for (std::size_t u = 0; u < a.units.size(); ++u) {
    Unit& unit = a.units[u];
    if (a.tasks.empty() || a.tasks.back().task != unit.task) {
      TaskResult t;
      t.task = unit.task;
      t.metric = a.cells[unit.cells.front()].cell.metric;
      t.higher_is_better = a.cells[unit.cells.front()].higher_is_better;
      a.tasks.push_back(std::move(t));
    }
    TaskResult& task = a.tasks.back();
    task.units.push_back(u);
    stats::PairedSettings ps;
    ps.bootstrap = options.bootstrap;
    ps.higher_is_better = task.higher_is_better;
    const auto compare = [&](std::size_t i, std::size_t j) {
      settings.push_back(ps);
      task.comparisons.push_back(a.comparisons.size());
      ComparisonResult c;
      c.a = i;
      c.b = j;
      a.comparisons.push_back(std::move(c));
    };
    if (!options.baseline.empty()) {
      unit.baseline = find_baseline(unit, a.cells, options.baseline);
      if (!unit.baseline) continue;
      baseline_found = true;
      for (std::size_t i : unit.cells)
        if (i != *unit.baseline) compare(i, *unit.baseline);
    } else {
      for (std::size_t x = 0; x < unit.cells.size(); ++x)
        for (std::size_t y = x + 1; y < unit.cells.size(); ++y) compare(unit.cells[x], unit.cells[y]);
    }
  }
  if (!options.baseline.empty() && !baseline_found) {
    std::set<std::string> names;
    for (const auto& c : a.cells) names.insert(c.cell.entrant);
    throw UserError("--baseline '" + options.baseline + "' is not a model of these results" +
                    suggestion(options.baseline, std::vector<std::string>(names.begin(), names.end())));
  }
  return settings;
}

// Pairings first, then every comparison's bootstrap at once (sharing draws), then the tests.
void run_comparisons(Analysis& a, const std::vector<stats::PairedSettings>& settings, const ReportOptions& options) {
  std::vector<stats::SeedValues> values_by_seed(a.cells.size());  // each cell's once, not once per comparison
  parallel_for(a.cells.size(), [&](std::size_t i) { values_by_seed[i] = seed_values(a.cells[i].cell); });
  std::vector<stats::SeedPairing> pairings(a.comparisons.size());
  parallel_for(a.comparisons.size(), [&](std::size_t k) {
    const ComparisonResult& c = a.comparisons[k];
    pairings[k] = stats::pair_by_seed(values_by_seed[c.a], values_by_seed[c.b]);
  });
  std::vector<std::vector<double>> differences;
  for (const auto& p : pairings) differences.push_back(p.differences);
  std::vector<stats::BootstrapInterval> paired_bootstraps = stats::bootstrap_means(differences, options.bootstrap);
  parallel_for(a.comparisons.size(), [&](std::size_t k) {
    a.comparisons[k].paired = stats::compare_paired(std::move(pairings[k]), std::move(paired_bootstraps[k]), settings[k]);
  });
}

// Per task: the multiple-testing family, the scaling fits and the warnings.
void finish_tasks(Analysis& a, const ReportOptions& options) {
  for (auto& t : a.tasks) {
    adjust_family(a.comparisons, t.comparisons, options);
    fit_scaling(a, t);
    task_warnings(a, t);
    if (!options.baseline.empty())
      for (std::size_t u : t.units)
        if (!a.units[u].baseline)
          t.warnings.push_back(a.units[u].label + ": no runs of the baseline '" + options.baseline + "'; nothing compared there");
    a.warnings.insert(a.warnings.end(), t.warnings.begin(), t.warnings.end());
  }
}

}  // namespace

namespace {

// --metric names a figure some run of the input records (as itself, or as a task metric
// "eval_<name>"): otherwise every table would be empty, and an exit 0 would hide the typo.
void check_metric_recorded(const ReportInput& input, const std::string& metric) {
  if (metric.empty() || input.runs.empty()) return;
  std::set<std::string> recorded;
  for (const auto& r : input.runs)
    for (const auto& [name, v] : r.metrics) {
      if (name == metric || name == FigureKey::task_metric(metric).stored()) return;
      recorded.insert(display_metric(name));
    }
  const std::vector<std::string> names(recorded.begin(), recorded.end());
  throw UserError("--metric " + metric + ": no run of the report records it" + suggestion(metric, names) +
                  "; they record: " + join(names, ", "));
}

}  // namespace

Analysis analyse(const ReportInput& input, const ReportOptions& options) {
  if (!(options.alpha > 0 && options.alpha < 1)) throw UserError("--alpha must lie in (0, 1)");
  check_metric_recorded(input, options.metric);
  if (options.bootstrap.resamples < 100) throw UserError("--resamples must be at least 100");
  if (!options.cost.empty() && cost_figure_name(options.cost).empty())
    throw UserError("--cost " + options.cost + " is not a cost figure" + suggestion(options.cost, cost_figure_names()));
  Analysis a;
  a.options = options;
  a.bad = input.bad;
  a.skipped = input.skipped;
  a.sources = input.sources;
  a.runs = input.runs.size();
  summarise_cells(a, input, options);
  run_comparisons(a, plan_comparisons(a, options), options);
  finish_tasks(a, options);
  rank_overall(a);
  a.fronts = pareto_fronts(a, a.warnings);
  for (std::size_t i = 0; i < a.cells.size(); ++i)
    if (!a.cells[i].cell.target_runs.empty()) a.targets.push_back(summarise_target(a.cells[i].cell, i, options.bootstrap.confidence));
  for (std::size_t i = 0; i < a.cells.size(); ++i)
    if (auto v = variance_sources(a.cells[i].cell, i, options.bootstrap.confidence)) a.variance_sources.push_back(std::move(*v));
  a.left_out = sources_left_out(a);
  if (options.rank_by == "cost-to-target") a.cost_to_target = cost_to_target(a, options.target_cost);
  ClaimSettings cs;
  cs.alpha = options.alpha;
  cs.bootstrap = options.bootstrap;
  a.claims = evaluate_claims(input.claims, input.runs, cs);
  judge_studies(a, input, cs);
  a.variants = analyse_variants(input.runs);
  for (const auto& b : a.bad) a.warnings.push_back("bad result file " + b.file.string() + ": " + b.reason + " (counted as missing)");
  for (const auto& s : a.skipped) a.warnings.push_back("skipped combination " + s);
  for (const auto& n : input.notes) a.warnings.push_back(n);
  if (input.runs.empty()) a.warnings.push_back("no valid run files");
  return a;
}

}  // namespace lrb
