#include "suite/report/report_json.h"

#include <set>

#include "suite/core/parallel_for.h"
#include "suite/core/version.h"
#include "suite/report/json_values.h"

namespace lrb {
namespace {

using json = nlohmann::json;

using json_values::opt;

json seed_values(const Cell& c, const std::vector<SeedValue>& v) {
  json out = json::array();
  for (const auto& sv : v) out.push_back({{"seed", sv.seed}, {"value", sv.value}, {"run", c.run_keys.at(sv.run)}});
  return out;
}

json rank_json(const stats::RankedModel& m) {
  return {{"rank", m.rank},
          {"group", m.group},
          {"group_rank", m.group_rank},
          {"leader", m.leader},
          {"n_pairs_vs_leader", m.n_pairs_vs_leader},
          {"p_vs_leader", opt(m.p_vs_leader)},
          {"p_adjusted_vs_leader", opt(m.p_adjusted_vs_leader)}};
}

json cell_json(const CellResult& r) {
  const Cell& c = r.cell;
  const auto& s = r.summary;
  json problems = json::array();
  for (const auto& p : c.problems) problems.push_back({{"seed", p.seed}, {"run", p.run}, {"status", p.status}, {"reason", p.reason}});
  json efficiency = json::object();
  for (const auto& [name, median] : r.efficiency)
    efficiency[name] = {{"median", median}, {"n", c.efficiency.at(name).size()}, {"values", seed_values(c, c.efficiency.at(name))}};
  json threads = json::array(), revisions = json::array(), devices = json::array();
  for (int t : c.threads) threads.push_back(t);
  for (const auto& v : c.revisions) revisions.push_back(v);
  for (const auto& v : c.devices) devices.push_back(v);
  return {{"task", c.task},
          {"model", c.model},
          {"entrant", c.entrant},
          {"metric", display_metric(c.metric)},
          {"metric_key", c.metric},
          {"higher_is_better", r.higher_is_better},
          {"setting", c.setting()},
          {"condition", c.condition},
          {"model_options", c.model_options},
          {"matched", c.matched},
          {"seq_len", c.seq_len},
          {"n", s.n},
          {"chance", display_metric(c.metric) == "accuracy" ? opt(r.chance) : json(nullptr)},
          {"failed", c.failed},
          {"stopped", c.stopped},
          {"no_value", c.no_value},
          {"mean", opt(s.mean)},
          {"std", opt(s.std)},
          {"sem", opt(s.sem)},
          {"ci95", opt(s.t_ci)},
          {"bootstrap_percentile95", opt(s.bootstrap.percentile)},
          {"bootstrap_bca95", opt(s.bootstrap.bca)},
          {"bootstrap", {{"resamples", s.bootstrap.resamples},
                         {"seed", s.bootstrap.seed ? json(*s.bootstrap.seed) : json(nullptr)},
                         {"confidence", s.bootstrap.confidence},
                         {"bias_correction", opt(s.bootstrap.bias_correction)},
                         {"acceleration", opt(s.bootstrap.acceleration)}}},
          {"median", opt(s.median)},
          {"q1", opt(s.q1)},
          {"q3", opt(s.q3)},
          {"iqr", opt(s.iqr)},
          {"iqm", opt(s.iqm)},
          {"min", opt(s.min)},
          {"max", opt(s.max)},
          {"rank", r.rank ? rank_json(*r.rank) : json(nullptr)},
          {"values", seed_values(c, c.values)},
          {"problems", problems},
          {"duplicates", c.duplicates},
          {"efficiency", efficiency},
          {"threads", threads},
          {"revisions", revisions},
          {"devices", devices}};
}

const char* wilcoxon_method(const stats::WilcoxonResult& w) {
  if (!w.p_value) return "none";
  return w.method_used == stats::WilcoxonMethod::kApprox ? "approx" : "exact";
}

// The random sources either side held that a crossed study of its task and model found to
// matter (variance_sources.h).
json sources_left_out_json(const Analysis& a, const ComparisonResult& cmp) {
  json out = json::array();
  for (const auto& l : a.left_out)
    if (l.cell == cmp.a || l.cell == cmp.b)
      out.push_back({{"side", l.cell == cmp.a ? "model" : "baseline"}, {"stream", l.stream}, {"share", l.share}, {"study_cell", l.study_cell}});
  return out;
}

json comparison_json(const Analysis& a, const ComparisonResult& cmp) {
  const Cell& ca = a.cells[cmp.a].cell;
  const Cell& cb = a.cells[cmp.b].cell;
  const auto& p = cmp.paired;
  return {{"task", ca.task},
          {"model", ca.model},
          {"baseline", cb.model},
          {"model_entrant", ca.entrant},
          {"baseline_entrant", cb.entrant},
          {"model_options", ca.model_options},
          {"baseline_options", cb.model_options},
          {"setting", ca.condition},
          {"metric", display_metric(ca.metric)},
          {"n_pairs", p.n_pairs},
          {"seeds", p.seeds},
          {"differences", p.differences},
          {"seeds_only_model", p.only_a},
          {"seeds_only_baseline", p.only_b},
          {"sources_left_out", sources_left_out_json(a, cmp)},
          {"mean_diff", opt(p.mean_diff)},
          {"sd_diff", opt(p.sd_diff)},
          {"ci95", opt(p.t.ci)},
          {"bootstrap_percentile95", opt(p.bootstrap.percentile)},
          {"bootstrap_bca95", opt(p.bootstrap.bca)},
          {"t_statistic", opt(p.t.statistic)},
          {"df", opt(p.t.df)},
          {"p_ttest", opt(p.t.p_value)},
          {"p_wilcoxon", opt(p.wilcoxon.p_value)},
          {"wilcoxon_method", wilcoxon_method(p.wilcoxon)},
          {"p_holm", opt(cmp.p_holm)},
          {"p_bh", opt(cmp.p_bh)},
          {"p_wilcoxon_holm", opt(cmp.p_wilcoxon_holm)},
          {"p_wilcoxon_bh", opt(cmp.p_wilcoxon_bh)},
          {"p_shown", opt(cmp.p_shown)},
          {"significant", cmp.significant},
          {"effect_size", opt(p.effect_size)},
          {"prob_improvement", opt(p.prob_improvement)}};
}

json rankings_json(const Analysis& a) {
  json out = json::array();
  for (const auto& u : a.units) {
    json models = json::array(), not_ranked = json::array();
    for (std::size_t i : u.cells) {
      const CellResult& c = a.cells[i];
      if (!c.rank) {
        not_ranked.push_back(c.cell.entrant);
        continue;
      }
      json m = rank_json(*c.rank);
      m["model"] = c.cell.entrant;
      m["mean"] = c.rank->mean;
      m["n"] = c.rank->n;
      models.push_back(std::move(m));
    }
    const CellResult& first = a.cells[u.cells.front()];
    out.push_back({{"task", u.task},
                   {"setting", u.condition},
                   {"label", u.label},
                   {"metric", display_metric(first.cell.metric)},
                   {"higher_is_better", first.higher_is_better},
                   {"models", models},
                   {"not_ranked", not_ranked}});
  }
  return out;
}

json overall_json(const OverallResult& o) {
  json j = {{"tasks", o.units}, {"left_out", o.left_out}, {"why_not", o.ranking ? json(nullptr) : json(o.why_not)}};
  json models = json::array();
  if (o.ranking) {
    for (const auto& m : o.ranking->models)
      models.push_back({{"model", m.model},
                        {"mean_rank", m.mean_rank},
                        {"mean_rank_ci", opt(m.mean_rank_ci)},
                        {"normalised_iqm", opt(m.normalised_iqm)},
                        {"normalised_iqm_ci", opt(m.normalised_iqm_ci)}});
    j["normalised_tasks"] = o.ranking->normalised_tasks;
    j["resamples"] = o.ranking->resamples;
    j["seed"] = o.ranking->seed;
    j["confidence"] = o.ranking->confidence;
  }
  j["models"] = models;
  return j;
}

json scaling_json(const ScalingResult& s) {
  json points = json::array();
  for (const auto& [x, y] : s.points) points.push_back({{"seq_len", x}, {"value", y}});
  return {{"task", s.task},
          {"model", s.model},
          {"entrant", s.entrant},
          {"setting", s.condition},
          {"metric", s.metric},
          {"lengths", s.lengths},
          {"n", s.fit.n},
          {"slope", s.fit.slope},
          {"slope_ci95", opt(s.fit.slope_ci)},
          {"slope_stderr", opt(s.fit.slope_stderr)},
          {"intercept", s.fit.intercept},
          {"r_squared", s.fit.r_squared},
          {"points", points}};
}

json look_json(const ClaimLook& l) {
  return {{"look", l.look},
          {"seeds", l.seeds},
          {"n", l.n},
          {"estimate", opt(l.estimate)},
          {"interval", opt(l.interval)},
          {"confidence", l.confidence},
          {"alpha", l.alpha},
          {"fraction", l.fraction},
          {"z_boundary", opt(l.z_boundary)},
          {"verdict", verdict_name(l.verdict)}};
}

json claim_json(const ClaimResult& r, const ClaimPlan* plan) {
  json j = r.claim.to_json();
  j["metric"] = display_metric(r.claim.metric);
  j["metric_key"] = r.claim.metric;
  j["higher_is_better"] = r.higher_is_better;
  j["claimed"] = r.claim.claimed_text(r.higher_is_better);
  j["verdict"] = verdict_name(r.verdict);
  j["why"] = r.why;
  j["n"] = r.n;
  j["estimate"] = opt(r.estimate);
  j["interval"] = opt(r.interval);
  j["confidence"] = r.confidence;
  j["threshold"] = opt(r.threshold);
  j["p_value"] = opt(r.p_value);
  j["p_holm"] = opt(r.p_holm);
  j["holm_step"] = r.holm_step ? json(r.holm_step) : json(nullptr);
  j["family"] = r.family ? json(r.family) : json(nullptr);
  j["sd"] = opt(r.sd);
  j["estimate_adjusted"] = opt(r.estimate_adjusted);
  j["log_ratio"] = r.log_ratio;
  j["seeds_needed"] = r.seeds_needed ? json(*r.seeds_needed) : json(nullptr);
  j["seeds"] = r.seeds;
  j["a_values"] = r.a_values;
  j["b_values"] = r.b_values;
  j["notes"] = r.notes;
  j["evidence"] = claim_evidence(r);
  j["design"] = r.sequential ? "sequential" : "fixed";
  if (r.sequential) {
    j["looks"] = json::array();
    for (const auto& l : r.looks) j["looks"].push_back(look_json(l));
    j["stopped"] = r.stopped;
  }
  j["plan"] = plan ? claim_plan_json(*plan) : json(nullptr);
  if (!r.halves.empty()) {
    j["halves"] = json::array();
    for (const auto& h : r.halves) j["halves"].push_back(claim_json(h, nullptr));
  }
  return j;
}

json study_json(const StudySummary& s) {
  json j = {{"sweep", s.sweep},
            {"design", s.design.to_json()},
            {"look_seeds", s.look_seeds},
            {"budget_s", opt(s.budget_seconds)},
            {"spent_s", s.spent_seconds},
            {"looks_done", s.plan.looks_done},
            {"state", wave_end_name(s.plan.end)},
            {"summary", s.plan.summary},
            {"runs", s.runs},
            {"study_id", s.study_id.empty() ? json(nullptr) : json(s.study_id)},
            {"seconds_per_seed", opt(s.seconds_per_seed)},
            {"budget_buys_seeds", opt(s.budget_buys_seeds)},
            {"claims", json::array()}};
  return j;
}

}  // namespace

json report_json(const Analysis& a, const std::string& kind) {
  json j;
  j["schema_version"] = kReportSchemaVersion;
  j["kind"] = kind;
  j["generated_by"] = {{"lrbench_version", lrbench_version()}, {"git_revision", git_revision()}, {"git_dirty", git_dirty()}};
  j["sources"] = a.sources;
  std::set<std::string> metrics;
  json by_task = json::object();
  for (const auto& t : a.tasks) {
    metrics.insert(display_metric(t.metric));
    by_task[t.task] = {{"metric", display_metric(t.metric)}, {"metric_key", t.metric}, {"higher_is_better", t.higher_is_better}};
  }
  j["metric"] = metrics.size() == 1 ? json(*metrics.begin()) : json(nullptr);
  j["tasks"] = by_task;
  j["options"] = {{"metric", a.options.metric.empty() ? json(nullptr) : json(a.options.metric)},
                  {"baseline", a.options.baseline.empty() ? json(nullptr) : json(a.options.baseline)},
                  {"correction", stats::correction_name(a.options.correction)},
                  {"cost", a.options.cost.empty() ? json(nullptr) : json(a.options.cost)},
                  {"alpha", a.options.alpha},
                  {"confidence", a.options.bootstrap.confidence},
                  {"bootstrap", {{"resamples", a.options.bootstrap.resamples}, {"seed", a.options.bootstrap.seed}}}};
  j["runs"] = a.runs;
  j["claims"] = json::array();
  for (std::size_t i = 0; i < a.claims.size(); ++i) {
    const auto plan = a.plans.find(i);
    j["claims"].push_back(claim_json(a.claims[i], plan == a.plans.end() ? nullptr : &plan->second));
  }
  j["studies"] = json::array();
  for (const auto& s : a.studies) {
    json sj = study_json(s);
    for (std::size_t i = s.claims_begin; i < s.claims_end; ++i) sj["claims"].push_back(a.claims[i].claim.name);
    j["studies"].push_back(std::move(sj));
  }
  j["cells"] = json::array();
  // A cell's document lists every seed's values: at 100,000 runs, worth every core.
  std::vector<json> cells(a.cells.size());
  parallel_for(a.cells.size(), [&](std::size_t i) { cells[i] = cell_json(a.cells[i]); });
  for (auto& c : cells) j["cells"].push_back(std::move(c));
  j["comparisons"] = json::array();
  for (const auto& c : a.comparisons) j["comparisons"].push_back(comparison_json(a, c));
  j["rankings"] = rankings_json(a);
  j["overall"] = overall_json(a.overall);
  j["scaling"] = json::array();
  for (const auto& s : a.scaling) j["scaling"].push_back(scaling_json(s));
  j["variants"] = variants_json(a.variants);
  j["fronts"] = fronts_json(a);
  j["targets"] = targets_json(a);
  j["variance_sources"] = variance_sources_json(a);
  if (a.cost_to_target) j["cost_to_target"] = cost_to_target_json(a, *a.cost_to_target);
  j["warnings"] = a.warnings;
  j["bad_files"] = json::array();
  for (const auto& b : a.bad) j["bad_files"].push_back({{"file", b.file.string()}, {"reason", b.reason}});
  j["skipped"] = a.skipped;
  return j;
}

}  // namespace lrb
