// ReportFront*, ReportTarget*, ReportCostToTarget*, ReportMatched*, ReportTimeBudget*: the
// report at equal cost, on runs with known values (tests/support/report_runs.h): the
// accuracy–cost front with its paired evidence, the cost to a target, the leaderboard by
// cost to the target with its performance profile, entrants named by their size match, and
// the warning on wall-time budgets from different machines.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <tuple>

#include "suite/core/errors.h"
#include "suite/report/analysis.h"
#include "suite/report/report_builder.h"
#include "suite/report/sinks.h"
#include "suite/stats/proportion.h"
#include "tests/support/report_inputs.h"
#include "tests/support/report_runs.h"

namespace lrb {
namespace {

using json = nlohmann::json;

using test::input_of;
ReportOptions fast() { return test::fast_options(); }

std::string render(const Report& r, const std::string& format) {
  std::ostringstream ss;
  make_report_sink(format)->write(r, ss);
  return ss.str();
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

const json& point(const json& front, const std::string& entrant) {
  for (const auto& p : front.at("points"))
    if (p.at("entrant") == entrant) return p;
  throw std::runtime_error("no point " + entrant);
}

// ---------------------------------------------------------------------------------------
// The front

// Runs trained to one FLOP budget spend it less up to a step (floor): placed at the budget,
// cells of one budget cost the same, and the better one dominates the other.
TEST(ReportFront, RunsOfOneFlopBudgetArePlacedAtTheBudget) {
  std::vector<RunRecord> runs;
  for (const auto& [model, acc, spent] : std::vector<std::tuple<std::string, double, double>>{
           {"maelre", 0.86, 0.999e12}, {"transformer", 0.31, 0.985e12}})
    for (int s = 0; s < 3; ++s) {
      test::RunDraft d;
      d.model = model;
      d.seed = s;
      d.train = {{"flops", 1e12}};
      d.metrics = {{"eval_accuracy", acc + 0.001 * s}, {"train_flops", spent}};
      runs.push_back(test::make_run(d));
    }
  const json f = build_report(input_of(runs), fast()).data().at("fronts").at(0);
  EXPECT_TRUE(point(f, "maelre").at("cost_is_budget").get<bool>());
  EXPECT_DOUBLE_EQ(point(f, "transformer").at("cost_mean").get<double>(), 1e12) << "its budget, not the 0.985e12 it spent";
  EXPECT_TRUE(point(f, "maelre").at("on_front").get<bool>());
  EXPECT_FALSE(point(f, "transformer").at("on_front").get<bool>()) << "cheaper by 1.5 %: a floor, not a cost";
  EXPECT_DOUBLE_EQ(point(f, "transformer").at("dominated_by").at("cost_ratio").get<double>(), 1.0);
}

// Budgets are labelled as a reader writes them, as claims' sides are (flops=4e+12), never as
// JSON prints a double (flops=4000000000000.0); a value six digits would change keeps them all.
TEST(ReportFront, BudgetsAreLabelledAsAReaderWritesThem) {
  std::vector<RunRecord> runs;
  for (double budget : {1e12, 4e12, 1.2345678e12})
    for (int s = 0; s < 2; ++s) {
      test::RunDraft d;
      d.seed = s;
      d.train = {{"flops", budget}};
      d.metrics = {{"eval_accuracy", 0.5 + 0.01 * s + budget * 1e-14}, {"train_flops", budget}};
      runs.push_back(test::make_run(d));
    }
  const std::string md = render(build_report(input_of(runs), fast()), "md");
  EXPECT_TRUE(contains(md, "flops=1e+12")) << md;
  EXPECT_TRUE(contains(md, "flops=4e+12")) << md;
  EXPECT_TRUE(contains(md, "flops=1234567800000")) << md;
  EXPECT_FALSE(contains(md, "4000000000000.0")) << md;
}

TEST(ReportFront, CellsOnTheFrontAndWhoDominatesTheRestWithPairedEvidence) {
  const Report r = build_report(input_of(test::front_runs()), fast());
  const json d = r.data();
  ASSERT_EQ(d.at("fronts").size(), 1u);
  const json& f = d.at("fronts")[0];
  EXPECT_EQ(f.at("task"), "listops");
  EXPECT_EQ(f.at("cost"), "train_flops");
  EXPECT_TRUE(contains(f.at("cost_choice"), "default")) << f.at("cost_choice");
  EXPECT_TRUE(f.at("higher_is_better").get<bool>());
  // Cheapest first; the tie (linear, longformer: equal means on both axes) dominates nothing.
  std::vector<std::string> order;
  for (const auto& p : f.at("points")) order.push_back(p.at("entrant"));
  EXPECT_EQ(order, (std::vector<std::string>{"linear", "longformer", "mvit", "maelre", "transformer", "bigbird"}));
  for (const char* on : {"linear", "longformer", "bigbird"}) EXPECT_TRUE(point(f, on).at("on_front").get<bool>()) << on;
  for (const char* off : {"mvit", "maelre", "transformer"}) EXPECT_FALSE(point(f, off).at("on_front").get<bool>()) << off;
  EXPECT_TRUE(point(f, "linear").at("dominated_by").is_null());

  // Clearly dominated: 0.10 better on every seed, a quarter of the FLOPs, exactly.
  const json& t = point(f, "transformer").at("dominated_by");
  EXPECT_EQ(t.at("entrant"), "linear");
  EXPECT_EQ(t.at("n_pairs"), 4);
  EXPECT_NEAR(t.at("delta").get<double>(), 0.10, 1e-12);
  EXPECT_GT(t.at("delta_ci95")[0].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(t.at("cost_ratio").get<double>(), 0.25);
  EXPECT_TRUE(t.at("cost_ratio_exact").get<bool>());
  EXPECT_TRUE(t.at("clear").get<bool>());
  // An exact cost: a point interval, said so.
  EXPECT_TRUE(point(f, "transformer").at("cost_exact").get<bool>());
  EXPECT_EQ(point(f, "transformer").at("cost_ci95"), json::array({4e12, 4e12}));

  // Dominated in the means only: mvit's seeds scatter ±0.03 around 0.69.
  const json& m = point(f, "mvit").at("dominated_by");
  EXPECT_EQ(m.at("entrant"), "linear");
  EXPECT_NEAR(m.at("delta").get<double>(), 0.01, 1e-12);
  EXPECT_LT(m.at("delta_ci95")[0].get<double>(), 0.0);
  EXPECT_FALSE(m.at("clear").get<bool>());
  EXPECT_TRUE(contains(m.at("reading"), "the Δ interval reaches 0")) << m.at("reading");
  EXPECT_NEAR(m.at("cost_ratio").get<double>(), 1.0 / 1.5, 1e-12);

  // Failed and stopped runs stay in view; the evidence pairs the two seeds both ran.
  const json& ma = point(f, "maelre");
  EXPECT_EQ(ma.at("n"), 2);
  EXPECT_EQ(ma.at("failed"), 1);
  EXPECT_EQ(ma.at("stopped"), 1);
  EXPECT_EQ(ma.at("dominated_by").at("seeds"), json::array({0, 1}));
  EXPECT_TRUE(ma.at("dominated_by").at("clear").get<bool>());
}

TEST(ReportFront, ALossIsLowerBetterAndGivesTheSameFront) {
  ReportOptions o = fast();
  o.metric = "eval_loss";
  const json d = build_report(input_of(test::front_runs()), o).data();
  const json& f = d.at("fronts").at(0);
  EXPECT_FALSE(f.at("higher_is_better").get<bool>());
  EXPECT_TRUE(point(f, "linear").at("on_front").get<bool>());
  EXPECT_TRUE(point(f, "bigbird").at("on_front").get<bool>());
  EXPECT_FALSE(point(f, "transformer").at("on_front").get<bool>()) << "a loss of 0.40 is the worst, not the best";
  const json& t = point(f, "transformer").at("dominated_by");
  EXPECT_NEAR(t.at("delta").get<double>(), -0.10, 1e-12);
  EXPECT_TRUE(t.at("clear").get<bool>());
}

TEST(ReportFront, TheTableSaysWhichCostAndHowClear) {
  const Report r = build_report(input_of(test::front_runs()), fast());
  const std::string text = render(r, "term");
  EXPECT_TRUE(contains(text, "listops — accuracy (higher is better) against cost: train FLOPs (default")) << text;
  EXPECT_TRUE(contains(text, "on the front"));
  EXPECT_TRUE(contains(text, "dominated"));
  EXPECT_TRUE(contains(text, "clear"));
  EXPECT_TRUE(contains(text, "in the means only"));
  EXPECT_TRUE(contains(text, "mvit: in the means only: the Δ interval reaches 0"));
  EXPECT_TRUE(contains(text, "0.25 (exact)"));
  const std::string md = render(r, "md"), tex = render(r, "tex");
  EXPECT_TRUE(contains(md, "on the front"));
  EXPECT_TRUE(contains(tex, "on the front"));
  // CSV: a row per point, with the evidence.
  const std::string csv = render(r, "csv");
  EXPECT_TRUE(contains(csv, "\nfront,listops,,transformer,")) << csv.substr(0, 400);
  std::size_t rows = 0;
  for (std::size_t at = 0; (at = csv.find("\nfront,", at)) != std::string::npos; ++at) ++rows;
  EXPECT_EQ(rows, 6u);
}

TEST(ReportFront, AChosenCostAndOneNotRecorded) {
  ReportOptions o = fast();
  o.cost = "params";
  const json d = build_report(input_of(test::front_runs()), o).data();
  const json& f = d.at("fronts").at(0);
  EXPECT_EQ(f.at("cost"), "params");
  EXPECT_EQ(f.at("cost_choice"), "--cost params");
  // Every cell costs 1e5 parameters: the best accuracy alone is on the front.
  for (const auto& p : f.at("points")) EXPECT_EQ(p.at("on_front").get<bool>(), p.at("entrant") == "bigbird") << p.at("entrant");
  o.cost = "peak_step_bytes";
  const Analysis a = analyse(input_of(test::front_runs()), o);
  EXPECT_TRUE(a.fronts.empty());
  EXPECT_TRUE(std::any_of(a.warnings.begin(), a.warnings.end(), [](const std::string& w) { return contains(w, "no run records peak_step_bytes"); }));
  o.cost = "bytes";
  EXPECT_THROW(analyse(input_of(test::front_runs()), o), UserError);
}

// ---------------------------------------------------------------------------------------
// The cost to a target

const std::map<std::string, std::vector<int>> kTargetSteps = {{"linear", {100, 120, 140, 160}},
                                                              {"transformer", {0, 0, 0, 0}},
                                                              {"bigbird", {200, 300, 0, 0}},
                                                              {"maelre", {150, 170, -1, -2}},
                                                              {"longformer", {100, 200, 300, 0}}};

const json& target(const json& d, const std::string& entrant) {
  for (const auto& t : d.at("targets"))
    if (t.at("entrant") == entrant) return t;
  throw std::runtime_error("no target row " + entrant);
}

TEST(ReportTarget, ShareWithItsIntervalAndTheMedianCountingNeverAsNever) {
  const json d = build_report(input_of(test::target_runs("listops", kTargetSteps)), fast()).data();
  ASSERT_EQ(d.at("targets").size(), 5u);
  const json& lin = target(d, "linear");
  EXPECT_EQ(lin.at("reached"), 4);
  EXPECT_DOUBLE_EQ(lin.at("share").get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(lin.at("median_steps").get<double>(), 130.0);
  EXPECT_DOUBLE_EQ(lin.at("median_flops").get<double>(), 1.3e11);
  EXPECT_NEAR(lin.at("median_seconds").get<double>(), 1.3, 1e-12);
  EXPECT_EQ(lin.at("target"), json({{"metric", "eval_accuracy"}, {"value", 0.7}}));
  // Never reached: a share of 0, and no median (never a large number).
  const json& tr = target(d, "transformer");
  EXPECT_EQ(tr.at("reached"), 0);
  EXPECT_FALSE(tr.at("median_reached").get<bool>());
  EXPECT_TRUE(tr.at("median_steps").is_null());
  EXPECT_EQ(tr.at("share_clopper_pearson95")[0], 0.0);
  // Half never reached it: the median is "not reached" (AlgoPerf's rule).
  EXPECT_FALSE(target(d, "bigbird").at("median_reached").get<bool>());
  EXPECT_TRUE(target(d, "bigbird").at("median_steps").is_null());
  // Three of four: the median over all four, the never as the largest: (200 + 300) / 2.
  EXPECT_DOUBLE_EQ(target(d, "longformer").at("median_steps").get<double>(), 250.0);
  // A failed run never reached it; a stopped one is left out: 2 of 3, median of {150, 170, never}.
  const json& ma = target(d, "maelre");
  EXPECT_EQ(ma.at("runs"), 4);
  EXPECT_EQ(ma.at("finished"), 3);
  EXPECT_EQ(ma.at("failed"), 1);
  EXPECT_EQ(ma.at("stopped"), 1);
  EXPECT_EQ(ma.at("reached"), 2);
  EXPECT_DOUBLE_EQ(ma.at("median_steps").get<double>(), 170.0);
  const auto w = stats::wilson_interval(2, 3);
  EXPECT_DOUBLE_EQ(ma.at("share_wilson95")[0].get<double>(), w->lo);
  EXPECT_DOUBLE_EQ(ma.at("share_wilson95")[1].get<double>(), w->hi);
}

TEST(ReportTarget, TheTableAndTheCsvSayNotReached) {
  const Report r = build_report(input_of(test::target_runs("listops", kTargetSteps)), fast());
  const std::string text = render(r, "term");
  EXPECT_TRUE(contains(text, "listops — cost to the target")) << text;
  EXPECT_TRUE(contains(text, "accuracy ≥ 0.7"));
  EXPECT_TRUE(contains(text, "not reached"));
  EXPECT_TRUE(contains(text, "2/3"));
  const std::string csv = render(r, "csv");
  EXPECT_TRUE(contains(csv, "\ntarget,listops,,transformer,")) << csv;
  EXPECT_TRUE(contains(csv, "not reached: half or more"));
}

// ---------------------------------------------------------------------------------------
// The leaderboard by cost to the target, on three tasks

TEST(ReportCostToTarget, RanksPerTaskSharingTiesAndProfilesAcrossTasks) {
  ReportOptions o = fast();
  o.rank_by = "cost-to-target";
  const json d = build_leaderboard(input_of(test::three_task_target_runs()), o).data();
  const json& c = d.at("cost_to_target");
  EXPECT_EQ(c.at("cost"), "flops");
  std::map<std::string, std::map<std::string, json>> rank;  // task -> entrant -> rank
  for (const auto& u : c.at("tasks"))
    for (const auto& m : u.at("models")) rank[u.at("task")][m.at("entrant")] = m.at("rank");
  EXPECT_EQ(rank["listops"], (std::map<std::string, json>{{"linear", 1}, {"maelre", 2}, {"transformer", 3}}));
  EXPECT_EQ(rank["text"], (std::map<std::string, json>{{"linear", 3}, {"maelre", 1}, {"transformer", 1}}));
  EXPECT_EQ(rank["image"], (std::map<std::string, json>{{"linear", 2}, {"maelre", 3}, {"transformer", 1}}));
  // ρ(τ) at 1, 1.25, 1.5, 2, 4, 8: linear is within 1×, 2×, 4× of the best on listops, text,
  // image; maelre 2×, 1×, never; transformer never, 1×, 1×.
  const json& p = c.at("profile");
  EXPECT_EQ(p.at("taus"), json::array({1, 1.25, 1.5, 2, 4, 8}));
  std::vector<std::string> order;
  std::map<std::string, std::vector<double>> rho;
  for (const auto& m : p.at("models")) {
    order.push_back(m.at("entrant"));
    rho[m.at("entrant")] = m.at("rho").get<std::vector<double>>();
  }
  EXPECT_EQ(order, (std::vector<std::string>{"transformer", "linear", "maelre"}));
  const double third = 1.0 / 3, two = 2.0 / 3;
  EXPECT_EQ(rho["linear"], (std::vector<double>{third, third, third, two, 1, 1}));
  EXPECT_EQ(rho["maelre"], (std::vector<double>{third, third, third, two, two, two}));
  EXPECT_EQ(rho["transformer"], (std::vector<double>{two, two, two, two, two, two}));
}

TEST(ReportCostToTarget, TablesInEveryFormatAndAUserErrorWithoutTargets) {
  ReportOptions o = fast();
  o.rank_by = "cost-to-target";
  o.target_cost = "steps";
  const Report r = build_leaderboard(input_of(test::three_task_target_runs()), o);
  const std::string text = render(r, "term");
  EXPECT_TRUE(contains(text, "text — models by median steps to the target")) << text;
  EXPECT_TRUE(contains(text, "1=")) << "maelre and the transformer share text's first rank";
  EXPECT_TRUE(contains(text, "performance profile"));
  EXPECT_TRUE(contains(text, "ρ(1.25)"));
  EXPECT_TRUE(contains(render(r, "tex"), "$\\rho$(1.25)")) << "LaTeX needs no package for the Greek letters";
  const std::string csv = render(r, "csv");
  EXPECT_TRUE(contains(csv, "\nprofile,")) << csv;
  EXPECT_TRUE(contains(csv, "\ncost_to_target,text,")) << csv;
  try {
    (void)build_leaderboard(input_of(test::front_runs()), o);
    FAIL() << "a leaderboard by cost to the target of runs without a target";
  } catch (const UserError& e) {
    EXPECT_TRUE(contains(e.what(), "has a target")) << e.what();
    EXPECT_TRUE(contains(e.what(), "target = {")) << e.what();
  }
}

// ---------------------------------------------------------------------------------------
// Sizes matched by a count, and wall-time budgets

// maelre matched to 1e6 and 4e6 parameters on two tasks (the width differs by task), and a
// transformer of fixed width.
std::vector<RunRecord> matched_runs() {
  std::vector<RunRecord> runs;
  const std::map<std::string, std::vector<int>> dims = {{"listops", {40, 80}}, {"text", {38, 78}}};
  for (const auto& [task, dim] : dims)
    for (int s = 0; s < 2; ++s) {
      for (int k = 0; k < 2; ++k) {
        test::RunDraft d;
        d.task = task;
        d.model = "maelre";
        d.seed = s;
        d.model_options = {{"dim", dim[static_cast<std::size_t>(k)]}};
        d.match = {{"dim", {{"figure", "params"}, {"to", k ? 4e6 : 1e6}, {"count", k ? 4001000.0 : 998912.0}}}};
        d.metrics = {{"eval_accuracy", 0.6 + 0.1 * k + 0.01 * s}, {"params", k ? 4001000.0 : 998912.0}};
        runs.push_back(test::make_run(d));
      }
      test::RunDraft t;
      t.task = task;
      t.seed = s;
      t.model_options = {{"dim", 16}};
      t.metrics = {{"eval_accuracy", 0.55 + 0.01 * s}, {"params", 5e4}};
      runs.push_back(test::make_run(t));
    }
  return runs;
}

TEST(ReportMatched, AMatchedWidthNamesTheEntrantByItsMatchOnEveryTask) {
  const Analysis a = analyse(input_of(matched_runs()), fast());
  std::set<std::string> entrants;
  for (const auto& c : a.cells) entrants.insert(c.cell.entrant);
  EXPECT_EQ(entrants, (std::set<std::string>{"maelre params≈1e+06", "maelre params≈4e+06", "transformer"}));
  ASSERT_TRUE(a.overall.ranking) << a.overall.why_not;
  EXPECT_TRUE(a.overall.left_out.empty());
  // The width chosen and its count stay visible.
  const json d = build_report(input_of(matched_runs()), fast()).data();
  bool seen = false;
  for (const auto& c : d.at("cells"))
    if (c.at("task") == "text" && c.at("entrant") == "maelre params≈1e+06") {
      seen = true;
      EXPECT_EQ(c.at("matched").at("dim").at("value"), 38);
      EXPECT_EQ(c.at("matched").at("dim").at("count"), 998912.0);
    }
  EXPECT_TRUE(seen);
  const std::string text = render(build_report(input_of(matched_runs()), fast()), "term");
  EXPECT_TRUE(contains(text, "maelre params≈1e+06: dim = 38 by a size match")) << text;
}

TEST(ReportTimeBudget, RunsUnderASecondsBudgetOnTwoMachinesWarn) {
  std::vector<RunRecord> runs;
  for (int s = 0; s < 4; ++s) {
    test::RunDraft d;
    d.seed = s;
    d.train = {{"seconds", 600}};
    d.provenance = {{"device_name", s < 2 ? "Xeon 8480" : "EPYC 9654"}};
    d.metrics = {{"eval_accuracy", 0.6}};
    runs.push_back(test::make_run(d));
  }
  const auto warned = [](const Analysis& a) {
    return std::any_of(a.warnings.begin(), a.warnings.end(), [](const std::string& w) { return contains(w, "wall-time budget"); });
  };
  const Analysis a = analyse(input_of(runs), fast());
  EXPECT_TRUE(warned(a));
  // The same machines under a step budget: their lengths agree, no such warning.
  for (auto& r : runs) r.spec["train"].erase("seconds");
  EXPECT_FALSE(warned(analyse(input_of(runs), fast())));
  // One machine, two thread counts: warned too.
  for (auto& r : runs) {
    r.spec["train"]["seconds"] = 600;
    r.provenance["device_name"] = "Xeon 8480";
    r.provenance["threads"] = r.spec.at("seed_index") == 0 ? 2 : 1;
  }
  EXPECT_TRUE(warned(analyse(input_of(runs), fast())));
}

}  // namespace
}  // namespace lrb
