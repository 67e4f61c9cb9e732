// The machine-readable sinks: JSON (Report::data as is) and CSV (one row per cell,
// comparison, run without a value, scaling fit and overall rank, from Report::data).
#include <functional>
#include <map>

#include "suite/report/cells.h"
#include "suite/report/efficiency.h"
#include "suite/report/escape.h"
#include "suite/report/sink_factories.h"

namespace lrb {
namespace {

using json = nlohmann::json;

class JsonSink final : public ReportSink {
 public:
  void write(const Report& report, std::ostream& out) override { out << report.data().dump(2) << "\n"; }
};

// Stable columns, whatever the report holds: tooling may index them by name.
const std::vector<std::string>& csv_columns() {
  static const std::vector<std::string> columns = [] {
    std::vector<std::string> c = {
        "kind", "task", "model", "entrant", "baseline", "setting", "metric", "n", "failed", "stopped", "no_value",
        "mean", "std", "sem", "ci95_lo", "ci95_hi", "percentile95_lo", "percentile95_hi", "bca95_lo", "bca95_hi",
        "median", "q1", "q3", "iqr", "iqm", "min", "max", "rank", "tie_group_rank",
        "mean_diff", "p_ttest", "p_wilcoxon", "p_holm", "p_bh", "significant", "effect_size", "prob_improvement",
        "seeds_only_model", "seeds_only_baseline", "seed", "run", "status", "reason",
        "claim", "claim_kind", "verdict", "estimate", "interval_lo", "interval_hi", "confidence", "seeds_needed", "chance"};
    for (const auto& m : efficiency_metrics()) c.push_back(m.name);
    for (const char* s : {"figure", "lengths", "slope", "slope_ci95_lo", "slope_ci95_hi", "r_squared", "mean_rank",
                          "mean_rank_ci_lo", "mean_rank_ci_hi", "normalised_iqm", "normalised_iqm_ci_lo", "normalised_iqm_ci_hi",
                          "cost", "cost_mean", "cost_ci95_lo", "cost_ci95_hi", "cost_exact", "on_front", "dominated_by", "delta",
                          "delta_ci95_lo", "delta_ci95_hi", "cost_ratio", "cost_ratio_ci95_lo", "cost_ratio_ci95_hi", "clear", "runs",
                          "reached", "share", "share_ci95_lo", "share_ci95_hi", "median_steps", "median_flops", "median_seconds",
                          "median", "tau", "rho", "before", "after", "margin", "margin_relative", "p_equivalence", "source", "levels", "df",
                          "component", "component_ci95_lo", "component_ci95_hi"})
      c.push_back(s);
    return c;
  }();
  return columns;
}

std::string field(const json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return csv_field(v.get<std::string>());
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_array()) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : " ") + (x.is_string() ? x.get<std::string>() : x.dump());
    return csv_field(s);
  }
  return v.dump();  // numbers: shortest text that reads back to the same double
}

using Row = std::map<std::string, json>;

void put_interval(Row& r, const std::string& prefix, const json& i) {
  if (!i.is_array()) return;
  r[prefix + "_lo"] = i[0];
  r[prefix + "_hi"] = i[1];
}

// The claims, a dominates claim's halves as rows of their own.
void claim_rows(const json& d, const std::function<void(const Row&)>& emit) {
  for (const auto& c : d.value("claims", json::array())) {
    Row r{{"kind", "claim"},           {"claim", c["name"]},          {"claim_kind", c["kind"]},   {"metric", c["metric_key"]},
          {"entrant", c["a"]["label"]}, {"verdict", c["verdict"]},    {"estimate", c["estimate"]}, {"n", c["n"]},
          {"confidence", c["confidence"]}, {"p_holm", c["p_holm"]}, {"seeds_needed", c["seeds_needed"]}, {"reason", c["why"]}};
    if (c.contains("b")) r["baseline"] = c["b"]["label"];
    put_interval(r, "interval", c["interval"]);
    emit(r);
    for (const auto& h : c.value("halves", json::array())) {
      Row hr{{"kind", "claim_half"}, {"claim", c["name"]},       {"claim_kind", h["kind"]}, {"metric", h["metric_key"]},
             {"entrant", h["a"]["label"]}, {"baseline", h["b"]["label"]}, {"verdict", h["verdict"]}, {"estimate", h["estimate"]},
             {"n", h["n"]}, {"confidence", h["confidence"]}, {"p_holm", h["p_holm"]}, {"reason", h["why"]}};
      put_interval(hr, "interval", h["interval"]);
      emit(hr);
    }
  }
}

// Accuracy–cost fronts (one row per cell of a front) and the cost to a target (one per cell).
void cost_rows(const json& d, const std::function<void(const Row&)>& emit) {
  for (const auto& f : d.value("fronts", json::array()))
    for (const auto& p : f["points"]) {
      Row r{{"kind", "front"}, {"task", f["task"]}, {"entrant", p["entrant"]}, {"setting", label_of(p["setting"])},
            {"metric", f["metric"]}, {"n", p["n"]}, {"failed", p["failed"]}, {"stopped", p["stopped"]}, {"mean", p["metric_mean"]},
            {"cost", f["cost"]}, {"cost_mean", p["cost_mean"]}, {"cost_exact", p["cost_exact"]}, {"on_front", p["on_front"]},
            {"reason", p["why_not_placed"]}};
      put_interval(r, "ci95", p["metric_ci95"]);
      put_interval(r, "cost_ci95", p["cost_ci95"]);
      if (const json& by = p["dominated_by"]; by.is_object()) {
        for (const char* k : {"delta", "cost_ratio", "clear"}) r[k] = by[k];
        r["dominated_by"] = by["entrant"].get<std::string>() + (label_of(by["setting"]).empty() ? "" : " " + label_of(by["setting"]));
        r["reason"] = by["reading"];
        put_interval(r, "delta_ci95", by["delta_ci95"]);
        put_interval(r, "cost_ratio_ci95", by["cost_ratio_ci95"]);
      }
      emit(r);
    }
  for (const auto& t : d.value("targets", json::array())) {
    Row r{{"kind", "target"}, {"task", t["task"]}, {"entrant", t["entrant"]}, {"setting", label_of(t["setting"])},
          {"metric", t["target"].value("metric", json())}, {"runs", t["runs"]}, {"n", t["finished"]}, {"reached", t["reached"]},
          {"failed", t["failed"]}, {"stopped", t["stopped"]}, {"share", t["share"]}, {"median_steps", t["median_steps"]},
          {"median_flops", t["median_flops"]}, {"median_seconds", t["median_seconds"]},
          {"reason", t["median_reached"].get<bool>() ? json() : json("not reached: half or more of the runs never reached the target")}};
    put_interval(r, "share_ci95", t["share_wilson95"]);
    emit(r);
  }
}

// Where each cell's variance comes from: one row per source (a cell that cannot say: one row
// with the reason).
void variance_rows(const json& d, const std::function<void(const Row&)>& emit) {
  for (const auto& v : d.value("variance_sources", json::array())) {
    const Row cell{{"kind", "variance"}, {"task", v["task"]}, {"entrant", v["entrant"]}, {"setting", label_of(v["setting"])},
                   {"metric", v["metric"]}, {"reason", v["why_not"]}};
    if (!v.contains("terms")) emit(cell);
    for (const auto& t : v.value("terms", json::array())) {
      Row r = cell;
      for (const char* k : {"source", "levels", "df", "component", "share"}) r[k] = t[k];
      put_interval(r, "component_ci95", t["interval"]);
      emit(r);
    }
  }
}

// `leaderboard --by cost-to-target`: the ranking per task and the performance profile.
void cost_to_target_rows(const json& d, const std::function<void(const Row&)>& emit) {
  const auto c = d.find("cost_to_target");
  if (c == d.end()) return;
  for (const auto& u : (*c)["tasks"])
    for (const auto& m : u["models"]) {
      Row r{{"kind", "cost_to_target"}, {"task", u["task"]}, {"setting", label_of(u["setting"])}, {"entrant", m["entrant"]},
            {"cost", (*c)["cost"]}, {"rank", m["rank"]}, {"median", m["median"]}, {"n", m["finished"]}, {"reached", m["reached"]},
            {"share", m["share"]}};
      put_interval(r, "share_ci95", m["share_wilson95"]);
      emit(r);
    }
  const json& p = (*c)["profile"];
  for (const auto& m : p["models"])
    for (std::size_t k = 0; k < p["taus"].size(); ++k)
      emit(Row{{"kind", "profile"}, {"entrant", m["entrant"]}, {"cost", (*c)["cost"]}, {"tau", p["taus"][k]}, {"rho", m["rho"][k]}});
}

// `lrbench compare`: one row per cell and figure, per provenance difference, per run found
// on one side only.
void compare_rows(const json& d, const std::function<void(const Row&)>& emit) {
  if (d.value("kind", std::string()) != "compare") return;
  for (const auto& c : d["changes"]) {
    Row r{{"kind", "change"},           {"task", c["task"]},       {"entrant", c["entrant"]},     {"setting", c["setting"]},
          {"figure", c["figure"]},      {"claim_kind", c["kind"]}, {"n", c["pairs"]},             {"before", c["before_mean"]},
          {"after", c["after_mean"]},   {"estimate", c["estimate"]}, {"p_ttest", c["p_change"]},  {"p_bh", c["p_adjusted"]},
          {"p_equivalence", c["p_equivalence"]}, {"verdict", c["change"]}, {"reason", c["why"]},
          {"confidence", 1 - d["alpha"].get<double>()}};
    if (c["margin"].is_object()) {
      r["margin"] = c["margin"]["value"];
      r["margin_relative"] = c["margin"]["relative"];
    }
    put_interval(r, "interval", c["interval"]);
    emit(r);
  }
  for (const auto& p : d["provenance"])
    emit(Row{{"kind", "provenance"}, {"figure", p["what"]}, {"before", p["before"]}, {"after", p["after"]}});
  for (const char* side : {"only_before", "only_after"})
    for (const auto& run : d[side]) emit(Row{{"kind", side}, {"run", run}});
}

class CsvSink final : public ReportSink {
 public:
  void write(const Report& report, std::ostream& out) override {
    const auto& columns = csv_columns();
    for (std::size_t i = 0; i < columns.size(); ++i) out << (i ? "," : "") << columns[i];
    out << "\n";
    auto emit = [&](const Row& r) {
      for (std::size_t i = 0; i < columns.size(); ++i) {
        auto it = r.find(columns[i]);
        out << (i ? "," : "") << (it == r.end() ? "" : field(it->second));
      }
      out << "\n";
    };
    const json& d = report.data();
    claim_rows(d, emit);
    for (const auto& c : d.value("cells", json::array())) {
      Row r{{"kind", "cell"}, {"task", c["task"]}, {"model", c["model"]}, {"entrant", c["entrant"]},
            {"setting", label_of(c["setting"])}, {"metric", c["metric"]}};
      for (const char* k : {"n", "chance", "failed", "stopped", "no_value", "mean", "std", "sem", "median", "q1", "q3", "iqr", "iqm", "min", "max"})
        r[k] = c[k];
      put_interval(r, "ci95", c["ci95"]);
      put_interval(r, "percentile95", c["bootstrap_percentile95"]);
      put_interval(r, "bca95", c["bootstrap_bca95"]);
      if (c["rank"].is_object()) {
        r["rank"] = c["rank"]["rank"];
        r["tie_group_rank"] = c["rank"]["group_rank"];
      }
      for (const auto& [name, e] : c["efficiency"].items()) r[name] = e["median"];
      emit(r);
      // Runs without a value: each its own row, so a failure cannot hide behind a count.
      for (const auto& p : c["problems"]) {
        Row pr{{"kind", "run_problem"}, {"task", c["task"]}, {"model", c["model"]}, {"entrant", c["entrant"]},
               {"setting", label_of(c["setting"])}, {"metric", c["metric"]}, {"seed", p["seed"]}, {"run", p["run"]},
               {"status", p["status"]}, {"reason", p["reason"]}};
        emit(pr);
      }
    }
    for (const auto& c : d.value("comparisons", json::array())) {
      Row r{{"kind", "comparison"}, {"task", c["task"]}, {"model", c["model"]}, {"entrant", c["model_entrant"]},
            {"baseline", c["baseline_entrant"]}, {"setting", label_of(c["setting"])}, {"metric", c["metric"]},
            {"n", c["n_pairs"]}};
      for (const char* k : {"mean_diff", "p_ttest", "p_wilcoxon", "p_holm", "p_bh", "significant", "effect_size", "prob_improvement",
                            "seeds_only_model", "seeds_only_baseline"})
        r[k] = c[k];
      put_interval(r, "ci95", c["ci95"]);
      put_interval(r, "percentile95", c["bootstrap_percentile95"]);
      put_interval(r, "bca95", c["bootstrap_bca95"]);
      emit(r);
    }
    for (const auto& s : d.value("scaling", json::array())) {
      Row r{{"kind", "scaling"}, {"task", s["task"]}, {"model", s["model"]}, {"entrant", s["entrant"]},
            {"setting", label_of(s["setting"])}, {"figure", s["metric"]}, {"n", s["n"]}, {"lengths", s["lengths"]},
            {"slope", s["slope"]}, {"r_squared", s["r_squared"]}};
      put_interval(r, "slope_ci95", s["slope_ci95"]);
      emit(r);
    }
    if (d.contains("overall") && d["kind"] == "leaderboard")
      for (const auto& m : d["overall"].value("models", json::array())) {
        Row r{{"kind", "overall"}, {"entrant", m["model"]}, {"mean_rank", m["mean_rank"]}, {"normalised_iqm", m["normalised_iqm"]}};
        put_interval(r, "mean_rank_ci", m["mean_rank_ci"]);
        put_interval(r, "normalised_iqm_ci", m["normalised_iqm_ci"]);
        emit(r);
      }
    cost_rows(d, emit);
    variance_rows(d, emit);
    cost_to_target_rows(d, emit);
    compare_rows(d, emit);
    for (const auto& w : d.value("warnings", json::array())) emit(Row{{"kind", "warning"}, {"reason", w}});
  }
};

ReportFormat csv_format() {
  return {"csv", {".csv"}, "one row per cell, comparison, run without a value, scaling fit, variance source and overall rank",
          [](bool) { return std::unique_ptr<ReportSink>(std::make_unique<CsvSink>()); }};
}

ReportFormat json_format() {
  return {"json", {".json"}, "the report's data as is (results/REPORT_SCHEMA.md)",
          [](bool) { return std::unique_ptr<ReportSink>(std::make_unique<JsonSink>()); }};
}

}  // namespace

LRB_REGISTER_REPORT_FORMAT(30, csv_format());
LRB_REGISTER_REPORT_FORMAT(50, json_format());

}  // namespace lrb
