#include "suite/report/variants.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "suite/config/expand.h"
#include "suite/config/run_streams.h"
#include "suite/contracts/figure_key.h"
#include "suite/report/cells.h"
#include "suite/report/text_format.h"
#include "suite/stats/sample_stats.h"
#include "suite/stats/t_tests.h"
#include "suite/store/run_view.h"

namespace lrb {
namespace {

using json = nlohmann::json;

std::optional<double> mean_of(const std::vector<double>& v) {
  if (v.empty()) return std::nullopt;
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

std::optional<double> metric(const RunRecord& r, const std::string& name) {
  auto it = r.metrics.find(name);
  if (it == r.metrics.end() || !std::isfinite(it->second)) return std::nullopt;
  return it->second;
}

// The spec without what differs between the seeds of one setting.
std::string group_key(const json& spec) {
  return without_replicate(spec).dump();
}

TableCell cell(const std::string& s) { return TableCell{s, std::nullopt, false, false, false, false}; }
TableCell number(double v, const std::string& s) { return TableCell{s, v, false, false, false, false}; }

// The settings that tell a group's variants apart (all of them when none differ); with
// merging off the rest change nothing, so only that is said.
std::string settings_label(const json& settings, const json& variants) {
  if (settings.contains("merge") && settings["merge"] == false) return "merge=false";
  json shown = json::object();
  for (const auto& [k, v] : settings.items())
    for (const auto& other : variants)
      if (other.at("settings").value(k, json()) != v && other.at("settings").value("merge", true) != false) {
        shown[k] = v;
        break;
      }
  return label_of(shown.empty() ? settings : shown);
}

}  // namespace

std::vector<VariantGroup> analyse_variants(const std::vector<RunRecord>& runs) {
  std::map<std::string, std::vector<const RunRecord*>> by_group;
  std::vector<std::string> order;
  for (const auto& r : runs) {
    if (r.status != RunStatus::Ok || r.view().evaluate.is_null()) continue;
    const std::string key = group_key(r.spec);
    if (!by_group.count(key)) order.push_back(key);
    by_group[key].push_back(&r);
  }
  // Labels: the model and whatever tells one task's groups apart.
  std::map<std::string, std::vector<const json*>> specs_of_task;
  for (const auto& key : order) {
    const RunRecord& r = *by_group[key].front();
    specs_of_task[r.view().task].push_back(&r.spec);
  }
  std::vector<VariantGroup> out;
  for (const auto& key : order) {
    const auto& members = by_group[key];
    const RunRecord& first = *members.front();
    VariantGroup g;
    g.task = first.view().task;
    g.metric = first.primary_metric();
    g.runs = members.size();
    g.label = first.view().model;
    for (const auto& path : varying_paths(specs_of_task[g.task])) {
      const json v = value_at_path(first.spec, path);
      if (!v.is_null()) g.label += " " + path.substr(path.find('.') + 1) + "=" + setting_text(v);
    }
    const json& evaluate = first.view().evaluate;
    for (const auto& v : evaluate.at("variants")) {
      VariantRow row;
      row.name = v.at("name");
      row.settings = v.at("settings");
      for (const RunRecord* r : members) {
        const auto value = metric(*r, variant_metric(row.name, g.metric)), trained = metric(*r, g.metric);
        if (value) row.metric.push_back(*value);
        if (value && trained) row.delta.push_back(*value - *trained);
      }
      if (row.delta.size() >= 2) row.delta_ci = stats::t_test_one_sample(row.delta).ci;
      for (const auto& b : evaluate.at("batch_sizes")) {
        VariantRow::Cost c;
        c.batch = b.get<std::int64_t>();
        const std::string peak = FigureKey::inference("peak_bytes", c.batch, row.name).stored();
        const std::string seconds = FigureKey::inference("seconds", c.batch, row.name).stored();
        std::vector<double> peaks;
        for (const RunRecord* r : members) {
          if (auto p = metric(*r, peak)) peaks.push_back(*p);
          auto it = r->curves.find(seconds);
          if (it != r->curves.end())
            for (double s : it->second)
              if (s > 0) c.samples_per_s.push_back(static_cast<double>(c.batch) / s);
        }
        if (!peaks.empty()) c.peak_bytes = stats::quantile(peaks, 0.5);
        row.cost.push_back(std::move(c));
      }
      // The probe points in the model's order, as the run recorded them.
      std::vector<std::string> probes;
      if (first.records.contains("probes"))
        for (const auto& p : first.records.at("probes")) probes.push_back(p.get<std::string>());
      for (const auto& p : probes) {
        VariantRow::Probe pr;
        pr.name = p;
        std::vector<double> cos, shift, ratio;
        for (const RunRecord* r : members) {
          const auto of = [&](const char* statistic) { return metric(*r, FigureKey::probe_statistic(p, statistic, row.name).stored()); };
          if (auto x = of("cosine")) cos.push_back(*x);
          if (auto x = of("mean_shift")) shift.push_back(*x);
          if (auto x = of("var_ratio")) ratio.push_back(*x);
        }
        pr.cosine = mean_of(cos);
        pr.mean_shift = mean_of(shift);
        pr.var_ratio = mean_of(ratio);
        row.probes.push_back(std::move(pr));
      }
      g.rows.push_back(std::move(row));
    }
    out.push_back(std::move(g));
  }
  return out;
}

namespace {

// The variants' task metric: mean ± std over runs and the paired difference to the runs as trained.
Table variant_metric_table(const VariantGroup& g, const std::string& task, const std::string& id) {
  const std::string m = display_metric(g.metric);
  Table acc;
  acc.id = id + "-" + m;
  acc.title = fmt::format("{} — {}: evaluation variants, {} (same weights, paired by run)", task, g.label, m);
  acc.columns = {"variant", "settings", m + " mean ± std", "Δ vs as trained", "95% CI (t)", "n"};
  json all = json::array();
  for (const auto& r : g.rows) all.push_back({{"settings", r.settings}});
  for (const auto& r : g.rows) {
    std::vector<TableCell> row = {cell(r.name), cell(settings_label(r.settings, all))};
    if (r.metric.empty()) {
      row.push_back(cell("–"));
    } else {
      const double mean = *mean_of(r.metric);
      double sd = 0;
      for (double x : r.metric) sd += (x - mean) * (x - mean);
      sd = r.metric.size() > 1 ? std::sqrt(sd / static_cast<double>(r.metric.size() - 1)) : 0;
      row.push_back(number(mean, fmt::format("{} ± {}", format_value(mean), r.metric.size() > 1 ? format_value(sd) : "–")));
    }
    if (r.delta.empty()) row.push_back(cell("–"));
    else row.push_back(number(*mean_of(r.delta), format_signed(*mean_of(r.delta))));
    row.push_back(r.delta_ci ? cell(fmt::format("[{}, {}]", format_signed(r.delta_ci->lo), format_signed(r.delta_ci->hi))) : cell("–"));
    row.push_back(number(static_cast<double>(r.metric.size()), std::to_string(r.metric.size())));
    acc.rows.push_back(std::move(row));
  }
  acc.notes.push_back("after training, each run's weights evaluated again under each variant's inference settings on the same "
                      "evaluation split; Δ = variant − the same run as trained, per run; the interval is the t interval over runs");
  return acc;
}

// Inference memory and throughput per variant and batch size.
Table variant_cost_table(const VariantGroup& g, const std::string& task, const std::string& id) {
  Table cost;
  cost.id = id + "-cost";
  cost.title = fmt::format("{} — {}: evaluation variants, inference memory and throughput", task, g.label);
  cost.columns = {"variant"};
  for (const auto& c : g.rows.front().cost) {
    cost.columns.push_back(fmt::format("peak memory (batch {})", c.batch));
    cost.columns.push_back(fmt::format("samples/s (batch {}), median [IQR]", c.batch));
  }
  for (const auto& r : g.rows) {
    std::vector<TableCell> row = {cell(r.name)};
    for (const auto& c : r.cost) {
      row.push_back(c.peak_bytes ? number(*c.peak_bytes, format_bytes(*c.peak_bytes)) : cell("–"));
      if (c.samples_per_s.empty()) {
        row.push_back(cell("–"));
      } else {
        const double med = stats::quantile(c.samples_per_s, 0.5);
        row.push_back(number(med, fmt::format("{} [{}, {}]", format_rate(med), format_rate(stats::quantile(c.samples_per_s, 0.25)),
                                              format_rate(stats::quantile(c.samples_per_s, 0.75)))));
      }
    }
    cost.rows.push_back(std::move(row));
  }
  cost.notes.push_back(fmt::format(
      "peak memory: what one forward pass allocates above what was live before it (activations), median over {} run(s); "
      "samples/s: batch / seconds of one forward pass, over every timed repeat of every run (variants take turns within each repeat)",
      g.runs));
  return cost;
}

// Activations at the probe points against the model as trained.
Table variant_probe_table(const VariantGroup& g, const std::string& task, const std::string& id) {
  Table shift;
  shift.id = id + "-probes";
  shift.title = fmt::format("{} — {}: evaluation variants, activations at the probe points against the model as trained", task, g.label);
  shift.columns = {"variant"};
  for (const auto& p : g.rows.front().probes) {
    shift.columns.push_back(p.name + " cosine");
    shift.columns.push_back(p.name + " mean shift");
    shift.columns.push_back(p.name + " variance ratio");
  }
  for (const auto& r : g.rows) {
    std::vector<TableCell> row = {cell(r.name)};
    for (const auto& p : r.probes)
      for (const auto& v : {p.cosine, p.mean_shift, p.var_ratio})
        row.push_back(v ? number(*v, fmt::format("{:.4f}", *v)) : cell("–"));
    shift.rows.push_back(std::move(row));
  }
  shift.notes.push_back("cosine: per token, between the variant's activations and those of the same weights as trained on the same "
                        "batch; mean shift: mean over channels of |Δ channel mean|, in units of the as-trained spread (square root "
                        "of the mean channel variance); variance ratio: mean channel variance over the as-trained one; means over runs");
  return shift;
}

}  // namespace

std::vector<Table> variant_tables(const std::vector<VariantGroup>& groups, const std::string& task) {
  std::vector<Table> out;
  std::size_t k = 0;
  for (const auto& g : groups) {
    if (g.task != task) continue;
    const std::string id = fmt::format("variants-{}-{}", task, ++k);
    out.push_back(variant_metric_table(g, task, id));
    if (!g.rows.empty() && !g.rows.front().cost.empty()) out.push_back(variant_cost_table(g, task, id));
    if (!g.rows.empty() && !g.rows.front().probes.empty()) out.push_back(variant_probe_table(g, task, id));
  }
  return out;
}

nlohmann::json variants_json(const std::vector<VariantGroup>& groups) {
  json out = json::array();
  auto opt = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  for (const auto& g : groups) {
    json rows = json::array();
    for (const auto& r : g.rows) {
      json cost = json::array(), probes = json::array();
      for (const auto& c : r.cost)
        cost.push_back({{"batch", c.batch},
                        {"peak_bytes", opt(c.peak_bytes)},
                        {"samples_per_s_median", c.samples_per_s.empty() ? json(nullptr) : json(stats::quantile(c.samples_per_s, 0.5))},
                        {"samples_per_s_p25", c.samples_per_s.empty() ? json(nullptr) : json(stats::quantile(c.samples_per_s, 0.25))},
                        {"samples_per_s_p75", c.samples_per_s.empty() ? json(nullptr) : json(stats::quantile(c.samples_per_s, 0.75))},
                        {"timings", c.samples_per_s.size()}});
      for (const auto& p : r.probes)
        probes.push_back({{"probe", p.name}, {"cosine", opt(p.cosine)}, {"mean_shift", opt(p.mean_shift)}, {"var_ratio", opt(p.var_ratio)}});
      rows.push_back({{"variant", r.name},
                      {"settings", r.settings},
                      {"values", r.metric},
                      {"mean", opt(mean_of(r.metric))},
                      {"delta_vs_trained", r.delta},
                      {"delta_mean", opt(mean_of(r.delta))},
                      {"delta_ci", r.delta_ci ? json::array({r.delta_ci->lo, r.delta_ci->hi}) : json(nullptr)},
                      {"cost", cost},
                      {"probes", probes}});
    }
    out.push_back({{"task", g.task}, {"label", g.label}, {"metric", display_metric(g.metric)}, {"runs", g.runs}, {"variants", rows}});
  }
  return out;
}

}  // namespace lrb
