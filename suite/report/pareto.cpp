#include "suite/report/pareto.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "suite/config/claim_spec.h"
#include "suite/contracts/figures.h"
#include "suite/core/text.h"
#include "suite/report/analysis.h"
#include "suite/report/json_values.h"
#include "suite/stats/ratio.h"
#include "suite/stats/t_tests.h"

namespace lrb {
namespace {

using json = nlohmann::json;

bool cpu_only(const Cell& c) {
  return std::all_of(c.devices.begin(), c.devices.end(), [](const std::string& d) { return d.rfind("cpu", 0) == 0; });
}

bool records(const Cell& c, const std::string& figure) {
  const auto it = c.efficiency.find(figure);
  return it != c.efficiency.end() && !it->second.empty();
}

std::vector<std::size_t> cells_of(const Analysis& a, const TaskResult& t) {
  std::vector<std::size_t> out;
  for (std::size_t u : t.units) out.insert(out.end(), a.units[u].cells.begin(), a.units[u].cells.end());
  return out;
}

// The cost a task's front uses, and how it was chosen; "" when the task has none to use.
std::pair<std::string, std::string> cost_of(const Analysis& a, const std::vector<std::size_t>& cells) {
  const auto any = [&](const std::string& figure) {
    return std::any_of(cells.begin(), cells.end(), [&](std::size_t i) { return records(a.cells[i].cell, figure); });
  };
  if (!a.options.cost.empty()) {
    const std::string figure = cost_figure_name(a.options.cost);
    return {any(figure) ? figure : "", "--cost " + a.options.cost};
  }
  if (any("train_flops")) return {"train_flops", "default: training FLOPs, recorded by the task's runs"};
  if (any("params")) return {"params", "default: parameters (the runs record no training FLOPs)"};
  return {"", ""};
}

AxisSummary summarise_axis(const std::vector<SeedValue>& values, bool exact_figure, double confidence) {
  AxisSummary s;
  s.n = values.size();
  if (values.empty()) return s;
  std::vector<double> v;
  for (const auto& sv : values) v.push_back(sv.value);
  const stats::TTest t = stats::t_test_one_sample(v, confidence);
  s.mean = t.estimate;
  s.ci = t.ci;
  s.exact = exact_figure && std::all_of(v.begin(), v.end(), [&](double x) { return x == v.front(); });
  if (s.exact) s.ci = stats::Interval{v.front(), v.front()};
  return s;
}

FrontPoint place(const CellResult& r, std::size_t index, const std::string& cost, double confidence) {
  FrontPoint p;
  p.cell = index;
  const Cell& c = r.cell;
  p.metric = summarise_axis(c.values, false, confidence);
  const FigureDef* figure = find_figure(cost);
  const auto it = c.efficiency.find(cost);
  if (it != c.efficiency.end())
    p.cost = summarise_axis(it->second, figure && figure->exact_on_cpu && cpu_only(c), confidence);
  // Runs trained to one FLOP budget spent it less up to a step (floor): cells at one budget
  // cost the same, and a front on training FLOPs places them at it.
  if (cost == "train_flops" && c.flops_budget && p.cost.mean) {
    p.cost.mean = *c.flops_budget;
    p.cost.ci = stats::Interval{*c.flops_budget, *c.flops_budget};
    p.cost.exact = p.cost.budget = true;
  }
  p.placed = p.metric.mean && p.cost.mean;
  if (!p.metric.mean) p.why_not_placed = fmt::format("no value of {}", display_metric(c.metric));
  else if (!p.cost.mean) p.why_not_placed = c.not_counted.count(cost) ? cost + " not counted" : "no " + cost + " recorded";
  return p;
}

// At least as good on both axes and better on one, by the means.
bool dominates(const FrontPoint& a, const FrontPoint& b, bool higher_is_better) {
  const double ma = *a.metric.mean, mb = *b.metric.mean, ca = *a.cost.mean, cb = *b.cost.mean;
  const bool metric_ok = higher_is_better ? ma >= mb : ma <= mb;
  const bool metric_strict = higher_is_better ? ma > mb : ma < mb;
  return metric_ok && ca <= cb && (metric_strict || ca < cb);
}

std::map<std::int64_t, std::pair<double, double>> by_seed(const Cell& c, const std::string& cost) {
  std::map<std::int64_t, double> metric;
  for (const auto& sv : c.values) metric[sv.seed] = sv.value;
  std::map<std::int64_t, std::pair<double, double>> out;
  for (const auto& sv : c.efficiency.at(cost))
    if (const auto m = metric.find(sv.seed); m != metric.end()) out[sv.seed] = {m->second, sv.value};
  return out;
}

// Whether each axis's evidence sits on the dominating side, and if not, why not.
void read_domination(Domination& d, bool higher_is_better) {
  const bool metric_clear = d.delta_ci && (higher_is_better ? d.delta_ci->lo > 0 : d.delta_ci->hi < 0);
  const bool cost_clear = (d.ratio_ci && d.ratio_ci->hi < 1) || (d.ratio_exact && d.ratio && *d.ratio == 1.0);
  d.clear = metric_clear && cost_clear;
  if (d.clear) {
    d.reading = "clear: both intervals on the dominating side";
    return;
  }
  std::vector<std::string> why;
  if (d.seeds.empty()) why.push_back("no seed has both cells' values");
  else if (d.seeds.size() == 1) why.push_back("one paired seed: no interval");
  else {
    if (!metric_clear) why.push_back(d.delta_ci ? "the Δ interval reaches 0" : "no Δ interval");
    if (!cost_clear) why.push_back(d.ratio_ci ? "the cost ratio's interval reaches 1" : "the cost ratio's interval is unbounded");
  }
  d.reading = "in the means only: " + join(why, "; ");
}

Domination evidence(const Analysis& a, const FrontPoint& by, const FrontPoint& of, const std::string& cost, bool higher_is_better,
                    double confidence) {
  Domination d;
  d.by = by.cell;
  const auto va = by_seed(a.cells[by.cell].cell, cost), vb = by_seed(a.cells[of.cell].cell, cost);
  std::vector<double> delta, ca, cb;
  for (const auto& [seed, x] : va)
    if (const auto y = vb.find(seed); y != vb.end()) {
      d.seeds.push_back(seed);
      delta.push_back(x.first - y->second.first);
      ca.push_back(x.second);
      cb.push_back(y->second.second);
    }
  if (!d.seeds.empty()) {
    const stats::TTest t = stats::t_test_one_sample(delta, confidence);
    d.delta = t.estimate;
    d.delta_ci = t.ci;
    const double mb = stats::mean(cb);
    if (mb != 0) d.ratio = stats::mean(ca) / mb;
  }
  d.ratio_exact = by.cost.exact && of.cost.exact;
  if (d.ratio_exact) {
    d.ratio = *by.cost.mean / *of.cost.mean;
    d.ratio_ci = stats::Interval{*d.ratio, *d.ratio};
  } else if (d.seeds.size() >= 2) {
    d.ratio_ci = stats::fieller_paired_ratio(ca, cb, stats::t_critical(confidence, static_cast<double>(d.seeds.size() - 1)));
  }
  read_domination(d, higher_is_better);
  return d;
}

// Marks the front and, for each cell off it, the dominating cell whose evidence reads best:
// a clear domination first, then one by a cell on the front, then the better metric.
void mark_front(const Analysis& a, TaskFront& f) {
  const auto dominated = [&](const FrontPoint& q, const FrontPoint& p) {
    return q.placed && q.cell != p.cell && dominates(q, p, f.higher_is_better);
  };
  for (auto& p : f.points)
    p.on_front = p.placed && std::none_of(f.points.begin(), f.points.end(), [&](const FrontPoint& q) { return dominated(q, p); });
  for (auto& p : f.points) {
    if (!p.placed || p.on_front) continue;
    std::optional<std::tuple<bool, bool, double, double, std::size_t>> best;
    for (const auto& q : f.points) {
      if (!dominated(q, p)) continue;
      Domination d = evidence(a, q, p, f.cost, f.higher_is_better, f.confidence);
      const auto key = std::make_tuple(!d.clear, !q.on_front, f.higher_is_better ? -*q.metric.mean : *q.metric.mean, *q.cost.mean, q.cell);
      if (!best || key < *best) {
        best = key;
        p.dominated_by = std::move(d);
      }
    }
  }
}

}  // namespace

std::vector<TaskFront> pareto_fronts(const Analysis& a, std::vector<std::string>& warnings) {
  std::vector<TaskFront> out;
  for (const auto& t : a.tasks) {
    const std::vector<std::size_t> cells = cells_of(a, t);
    const auto [cost, choice] = cost_of(a, cells);
    if (cost.empty()) {
      if (!a.options.cost.empty())
        warnings.push_back(fmt::format("{}: no run records {} (--cost {}): no accuracy–cost front", t.task,
                                       cost_figure_name(a.options.cost), a.options.cost));
      continue;
    }
    TaskFront f{t.task, t.metric, t.higher_is_better, cost, choice, a.options.bootstrap.confidence, {}};
    for (std::size_t i : cells) f.points.push_back(place(a.cells[i], i, cost, f.confidence));
    if (std::count_if(f.points.begin(), f.points.end(), [](const FrontPoint& p) { return p.placed; }) < 2) continue;
    // Cheapest first, cells that could not be placed last.
    std::stable_sort(f.points.begin(), f.points.end(), [](const FrontPoint& x, const FrontPoint& y) {
      if (x.placed != y.placed) return x.placed;
      return x.placed && *x.cost.mean < *y.cost.mean;
    });
    mark_front(a, f);
    out.push_back(std::move(f));
  }
  return out;
}

namespace {

using json_values::opt;

json point_json(const Analysis& a, const FrontPoint& p) {
  const Cell& c = a.cells[p.cell].cell;
  json j = {{"cell", p.cell},
            {"entrant", c.entrant},
            {"setting", c.setting()},
            {"n", p.metric.n},
            {"failed", c.failed},
            {"stopped", c.stopped},
            {"no_value", c.no_value},
            {"metric_mean", opt(p.metric.mean)},
            {"metric_ci95", opt(p.metric.ci)},
            {"cost_n", p.cost.n},
            {"cost_mean", opt(p.cost.mean)},
            {"cost_ci95", opt(p.cost.ci)},
            {"cost_exact", p.cost.exact},
            {"cost_is_budget", p.cost.budget},
            {"placed", p.placed},
            {"why_not_placed", p.placed ? json(nullptr) : json(p.why_not_placed)},
            {"on_front", p.on_front},
            {"dominated_by", nullptr}};
  if (const auto& d = p.dominated_by)
    j["dominated_by"] = {{"cell", d->by},
                         {"entrant", a.cells[d->by].cell.entrant},
                         {"setting", a.cells[d->by].cell.setting()},
                         {"n_pairs", d->seeds.size()},
                         {"seeds", d->seeds},
                         {"delta", opt(d->delta)},
                         {"delta_ci95", opt(d->delta_ci)},
                         {"cost_ratio", opt(d->ratio)},
                         {"cost_ratio_ci95", opt(d->ratio_ci)},
                         {"cost_ratio_exact", d->ratio_exact},
                         {"clear", d->clear},
                         {"reading", d->reading}};
  return j;
}

}  // namespace

json fronts_json(const Analysis& a) {
  json out = json::array();
  for (const auto& f : a.fronts) {
    json points = json::array();
    for (const auto& p : f.points) points.push_back(point_json(a, p));
    out.push_back({{"task", f.task},
                   {"metric", display_metric(f.metric)},
                   {"metric_key", f.metric},
                   {"higher_is_better", f.higher_is_better},
                   {"cost", f.cost},
                   {"cost_choice", f.cost_choice},
                   {"confidence", f.confidence},
                   {"points", std::move(points)}});
  }
  return out;
}

}  // namespace lrb
