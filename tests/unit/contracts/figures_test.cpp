// Figures*: the figure catalogue (suite/contracts/figures.h) is the one place a figure's
// direction, unit and exactness live; rankings, claims and tables read it, never a name's
// spelling. A task metric where lower is better (an error rate) is ranked, marked and
// judged the right way round.
#include <gtest/gtest.h>

#include <stdexcept>

#include "suite/contracts/figures.h"
#include "suite/contracts/metrics.h"
#include "suite/report/analysis.h"
#include "suite/report/claims/claims.h"
#include "suite/report/report_input.h"
#include "suite/report/report_tables.h"
#include "tests/support/report_runs.h"

namespace lrb {
namespace {

TEST(Figures, EachStoredNameResolvesToItsDeclaration) {
  EXPECT_EQ(figure_direction("allreduce_share"), Direction::Lower);  // was ranked higher-is-better by its name
  EXPECT_EQ(figure_direction("samples_per_s"), Direction::Higher);
  EXPECT_EQ(figure_direction("eval_accuracy"), Direction::Higher);
  EXPECT_EQ(figure_direction("eval_loss"), Direction::Lower);
  EXPECT_EQ(figure_direction("eval_chance"), Direction::None);
  EXPECT_EQ(figure_direction("variant.merged.eval_macro_f1"), Direction::Higher);
  EXPECT_EQ(figure_direction("variant.merged.probe_pool1_mean_shift"), Direction::Lower);
  EXPECT_EQ(figure_direction("probe_pool1_var_ratio"), Direction::None);  // 1 is ideal
  EXPECT_EQ(figure_direction("probe_pool1_cosine"), Direction::Higher);
  EXPECT_EQ(figure_direction("no_such_figure"), Direction::None);
  EXPECT_EQ(find_figure("no_such_figure"), nullptr);
  EXPECT_EQ(find_figure("eval_no_such_metric"), nullptr);
  EXPECT_EQ(find_figure("infer_peak_bytes_b"), nullptr) << "a family needs its variable part";

  const FigureDef* peak = find_figure("variant.v.infer_peak_bytes_b16");
  ASSERT_NE(peak, nullptr);
  EXPECT_TRUE(peak->exact_on_cpu);
  EXPECT_EQ(peak->unit, FigureUnit::Bytes);
  EXPECT_EQ(peak->recorded_by, "variant evaluator");
  EXPECT_TRUE(find_figure("params")->exact_on_cpu);
  EXPECT_FALSE(find_figure("step_seconds_median")->exact_on_cpu);
  EXPECT_EQ(find_figure("attention_peak_bytes")->recorded_by, "model maelre");
}

TEST(Figures, EveryTaskMetricIsDeclared) {
  for (const MetricDef& m : metric_table()) {
    const FigureDef* f = find_figure("eval_" + m.name);
    ASSERT_NE(f, nullptr) << m.name << " is in metrics.cpp's table but not in the figure catalogue";
    EXPECT_TRUE(f->task_metric) << m.name;
    EXPECT_NE(f->direction, Direction::None) << m.name;
  }
}

TEST(Figures, OneFigureHasOneDefinition) {
  FigureDef again;
  again.name = "peak_bytes";
  again.unit = FigureUnit::Bytes;
  again.direction = Direction::Higher;
  again.recorded_by = "a careless extension";
  EXPECT_THROW(declare_figure(again), std::logic_error);
  EXPECT_EQ(figure_direction("peak_bytes"), Direction::Lower);
  // The same declaration twice (a registration seen twice) is no conflict.
  again = *find_figure("peak_bytes");
  EXPECT_NO_THROW(declare_figure(again));
}

// A task whose metric is an error rate: lower is better. Two models over five seeds, the
// softmax transformer's error 0.05 below the linear one's on every seed.
std::vector<RunRecord> error_rate_runs(const std::string& metric) {
  std::vector<RunRecord> runs;
  for (int seed = 0; seed < 5; ++seed)
    for (const char* attention : {"softmax", "linear"}) {
      test::RunDraft d;
      d.seed = seed;
      d.model_options = {{"attention", attention}};
      const double linear = 0.30 + 0.01 * seed;
      // The gap varies a little by seed: differences without spread are no evidence.
      d.metrics = {{metric, std::string(attention) == "softmax" ? linear - 0.05 - 0.003 * (seed % 3) : linear}};
      RunRecord r = test::make_run(d);
      r.records["task"]["metrics"] = {metric.substr(5)};
      runs.push_back(std::move(r));
    }
  return runs;
}

void declare_error_rate() {
  FigureDef f;
  f.name = "error_rate";
  f.unit = FigureUnit::Plain;
  f.direction = Direction::Lower;
  f.recorded_by = "task metric (a test's fixture task)";
  f.task_metric = true;
  declare_figure(f);
}

CellSelector attention(const std::string& a) {
  CellSelector s;
  s.match = {{"model.name", "transformer"}, {"model.options.attention", a}};
  s.label = "transformer attention=" + a;
  s.expected_runs = 5;
  return s;
}

ClaimSpec better(const std::string& metric) {
  ClaimSpec c;
  c.name = c.statement = "softmax errs less";
  c.source = "constructed";
  c.kind = ClaimKind::Better;
  c.metric = metric;
  c.a = attention("softmax");
  c.b = attention("linear");
  return c;
}

TEST(Figures, AnErrorRateIsRankedMarkedAndJudgedLowerIsBetter) {
  declare_error_rate();
  ReportInput in;
  in.runs = error_rate_runs("eval_error_rate");
  ReportOptions o;
  o.bootstrap.resamples = 500;
  const Analysis a = analyse(in, o);
  ASSERT_EQ(a.cells.size(), 2u);
  for (const CellResult& c : a.cells) {
    EXPECT_EQ(c.cell.metric, "eval_error_rate");
    EXPECT_FALSE(c.higher_is_better);
  }
  ASSERT_EQ(a.units.size(), 1u);
  // The smaller error ranks first: the unit lists its cells best first.
  const CellResult& best = a.cells[a.units[0].cells.front()];
  EXPECT_NE(best.cell.entrant.find("softmax"), std::string::npos) << best.cell.entrant;
  ASSERT_TRUE(best.rank.has_value());
  EXPECT_EQ(best.rank->rank, 1.0);
  const std::vector<Table> tables = report_tables(a);
  bool titled = false;
  for (const Table& t : tables) titled = titled || t.title.find("error_rate (lower is better)") != std::string::npos;
  EXPECT_TRUE(titled) << "no table names the error rate's direction";

  // A claim that softmax errs less is supported: A − B < 0 on every seed.
  const auto verdicts = evaluate_claims({better("eval_error_rate")}, in.runs, ClaimSettings{});
  ASSERT_EQ(verdicts.size(), 1u);
  EXPECT_FALSE(verdicts[0].higher_is_better);
  EXPECT_EQ(verdicts[0].verdict, Verdict::Supported) << verdicts[0].why;
}

TEST(Figures, TheExchangeShareIsJudgedLowerIsBetter) {
  // A smaller share of each step in the gradient exchange is the better one: a claim that
  // softmax's share is smaller is supported (its name has no "loss", "bytes" or "seconds":
  // the substring rule judged it the wrong way round).
  std::vector<RunRecord> runs = error_rate_runs("eval_allreduce_share");
  for (RunRecord& r : runs) {
    r.metrics["allreduce_share"] = r.metrics.at("eval_allreduce_share");
    r.metrics.erase("eval_allreduce_share");
  }
  const auto share = evaluate_claims({better("allreduce_share")}, runs, ClaimSettings{});
  ASSERT_EQ(share.size(), 1u);
  EXPECT_FALSE(share[0].higher_is_better);
  EXPECT_EQ(share[0].verdict, Verdict::Supported) << share[0].why;
}

TEST(Figures, ABetterClaimOnAFigureWithoutABetterSideIsNotTested) {
  std::vector<RunRecord> runs = error_rate_runs("eval_error_rate");
  for (RunRecord& r : runs) r.metrics["eval_chance"] = 0.1;
  const auto v = evaluate_claims({better("eval_chance")}, runs, ClaimSettings{});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].verdict, Verdict::NotTested);
  EXPECT_NE(v[0].why.find("no better side"), std::string::npos) << v[0].why;
}

}  // namespace
}  // namespace lrb
