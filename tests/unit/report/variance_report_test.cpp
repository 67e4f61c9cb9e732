// ReportVarianceSources*: runs that vary random streams on their own ([sweep] vary): the
// report pairs them on the whole tuple of stream indices and gives each cell's variance by
// source, in every format.
#include <gtest/gtest.h>

#include <sstream>

#include "suite/config/run_streams.h"
#include "suite/report/analysis.h"
#include "suite/report/report_builder.h"
#include "suite/report/sinks.h"
#include "tests/support/report_inputs.h"
#include "tests/support/report_runs.h"

namespace lrb {
namespace {

using json = nlohmann::json;

using test::input_of;
ReportOptions fast() { return test::fast_options(); }

// Seeds 0..2 (the dropout stream follows them) x order 0..1 x init 0..2, data fixed: the
// accuracy moves mostly with init, a little with order, and by a hair with the rest.
std::vector<RunRecord> crossed_runs(const std::string& model, double base, bool drop_one = false) {
  const double init_effect[] = {-0.04, 0.0, 0.05}, order_effect[] = {-0.01, 0.01};
  std::vector<RunRecord> runs;
  for (int s = 0; s < 3; ++s)
    for (int o = 0; o < 2; ++o)
      for (int i = 0; i < 3; ++i) {
        if (drop_one && s == 2 && o == 1 && i == 2) continue;
        test::RunDraft d;
        d.model = model;
        d.seed = s;
        d.streams = {{"data", 0}, {"order", o}, {"init", i}};
        d.metrics = {{"eval_accuracy", base + init_effect[i] + order_effect[o] + 0.001 * ((s * 7 + o * 3 + i * 5) % 4)}};
        runs.push_back(test::make_run(d));
      }
  return runs;
}

TEST(ReportVarianceSources, EachCellSaysWhichStreamItsVarianceComesFrom) {
  std::vector<RunRecord> runs = crossed_runs("transformer", 0.6);
  for (auto& r : crossed_runs("linear", 0.55)) runs.push_back(std::move(r));
  const Analysis a = analyse(input_of(runs), fast());
  ASSERT_EQ(a.variance_sources.size(), 2u);
  for (const auto& v : a.variance_sources) {
    EXPECT_EQ(v.factors, (std::vector<std::string>{"order", "init", "dropout"}));
    EXPECT_EQ(v.levels, (std::vector<std::int64_t>{2, 3, 3}));
    ASSERT_TRUE(v.components) << v.why_not;
    const auto& init = v.components->terms[1];
    ASSERT_EQ(init.factors, std::vector<std::string>{"init"});
    EXPECT_GT(init.share, 0.8);
    // The init effects' own variance (levels drawn as fixed here: their sample variance).
    EXPECT_NEAR(init.component, 0.0020333, 2e-4);
    EXPECT_GT(v.components->terms[0].share, 0.02);  // order
  }
  // The two models pair on all 18 tuples of stream indices.
  ASSERT_EQ(a.comparisons.size(), 1u);
  EXPECT_EQ(a.comparisons[0].paired.n_pairs, 18u);
}

TEST(ReportVarianceSources, AnIncompleteCrossingSaysSoInsteadOfAComponent) {
  const Analysis a = analyse(input_of(crossed_runs("transformer", 0.6, true)), fast());
  ASSERT_EQ(a.variance_sources.size(), 1u);
  EXPECT_FALSE(a.variance_sources[0].components);
  EXPECT_NE(a.variance_sources[0].why_not.find("17 of its 18 combinations"), std::string::npos) << a.variance_sources[0].why_not;
}

TEST(ReportVarianceSources, PlainSeedsAreACellOfTheirOwnAndPairOnlyWithTheirOwnTuple) {
  std::vector<RunRecord> runs = crossed_runs("transformer", 0.6);
  // Plain seeds 0..2 of the same transformer: every stream at the seed's index. Another design
  // (its spread is of every source at once), so another cell, without a variance table.
  for (int s = 0; s < 3; ++s) {
    test::RunDraft d;
    d.seed = s;
    d.metrics = {{"eval_accuracy", 0.5}};
    runs.push_back(test::make_run(d));
  }
  const Analysis a = analyse(input_of(runs), fast());
  ASSERT_EQ(a.cells.size(), 2u);
  EXPECT_EQ(a.cells[0].cell.condition.at("streams"), "data+order+init");
  EXPECT_EQ(a.cells[1].cell.condition.at("streams"), "seed");
  ASSERT_EQ(a.variance_sources.size(), 1u);
  EXPECT_EQ(a.variance_sources[0].cell, 0u);
  // Paired (a claim across the two, say) only where all four indices agree: seed 0 with
  // order 0 and init 0 draws every stream at 0, the plain seed 0's tuple.
  stats::SeedValues crossed, plain;
  for (const auto& v : a.cells[0].cell.values) crossed[v.seed] = v.value;
  for (const auto& v : a.cells[1].cell.values) plain[v.seed] = v.value;
  const stats::SeedPairing p = stats::pair_by_seed(crossed, plain);
  ASSERT_EQ(p.seeds.size(), 1u);
  EXPECT_EQ(replicate_label(p.seeds[0]), "seed 0");
}

// A comparison whose cells held init at one index, beside a crossed study that found init to
// carry most of the variance: the comparisons table says the interval leaves it out.
TEST(ReportVarianceSources, AComparisonThatHeldASourceAStudyFoundToMatterSaysSo) {
  std::vector<RunRecord> runs = crossed_runs("transformer", 0.6);
  for (auto& r : crossed_runs("linear", 0.55)) runs.push_back(std::move(r));
  for (const std::string model : {"transformer", "linear"})
    for (int s = 0; s < 5; ++s) {
      test::RunDraft d;
      d.model = model;
      d.seed = s;
      d.streams = {{"init", 0}};  // fixed = ["init"]
      d.metrics = {{"eval_accuracy", (model == "linear" ? 0.5 : 0.6) + 0.01 * s}};
      runs.push_back(test::make_run(d));
    }
  const Analysis a = analyse(input_of(runs), fast());
  // The held runs are cells of their own (another design), compared among themselves.
  ASSERT_EQ(a.cells.size(), 4u);
  ASSERT_EQ(a.comparisons.size(), 2u);
  ASSERT_EQ(a.left_out.size(), 2u);
  for (const auto& l : a.left_out) {
    EXPECT_EQ(l.stream, "init");
    EXPECT_GT(l.share, 0.8);
    EXPECT_EQ(a.cells[l.cell].cell.values.size(), 5u);
  }
  const Report r = build_report(input_of(runs), fast());
  std::ostringstream md;
  make_report_sink("md")->write(r, md);
  EXPECT_NE(md.str().find("its runs held the init stream at one index, which carries"), std::string::npos) << md.str();
  std::ostringstream js;
  make_report_sink("json")->write(r, js);
  const json j = json::parse(js.str());
  std::size_t noted = 0;
  for (const auto& c : j.at("comparisons")) noted += c.at("sources_left_out").size();
  EXPECT_EQ(noted, 2u);  // both sides of the held comparison
}

// A claim between two crossed cells, inconclusive: the plan says how many levels of each
// source it would take.
TEST(ReportVarianceSources, ThePlanSaysHowManyLevelsOfEachSourceAClaimNeeds) {
  std::vector<RunRecord> runs = crossed_runs("transformer", 0.6);
  for (auto& r : crossed_runs("linear", 0.599)) runs.push_back(std::move(r));
  // Linear's init effects differ from the transformer's: the paired differences vary with init.
  for (auto& r : runs)
    if (r.spec.at("model").at("name") == "linear")
      r.metrics["eval_accuracy"] += 0.004 * static_cast<double>(r.spec.at("streams").at("init").get<int>() - 1);
  ClaimSpec c;
  c.name = "transformer-better";
  c.statement = c.name;
  c.source = "constructed";
  c.kind = ClaimKind::Better;
  c.metric = "eval_accuracy";
  c.a.match = {{"model.name", "transformer"}};
  c.a.label = "transformer";
  c.b.match = {{"model.name", "linear"}};
  c.b.label = "linear";
  c.a.expected_runs = c.b.expected_runs = 18;
  ReportInput in = input_of(runs);
  in.claims = {c};
  const Analysis a = analyse(in, fast());
  ASSERT_EQ(a.claims.size(), 1u);
  ASSERT_EQ(a.plans.count(0), 1u) << verdict_name(a.claims[0].verdict);
  const ClaimPlan& p = a.plans.at(0);
  ASSERT_EQ(p.levels_by_source.size(), 3u);
  EXPECT_EQ(p.levels_by_source[1].source, "init");
  EXPECT_EQ(p.levels_by_source[1].now, 3);
  ASSERT_TRUE(p.levels_by_source[1].needed);
  EXPECT_GT(*p.levels_by_source[1].needed, 3);
  ASSERT_TRUE(p.levels_each);
  std::ostringstream md;
  make_report_sink("md")->write(build_plan(in, fast()), md);
  EXPECT_NE(md.str().find("transformer-better: its pairs cross order x init x dropout at 2 x 3 x 3 levels"), std::string::npos) << md.str();
}

TEST(ReportVarianceSources, EveryFormatShowsTheTable) {
  const Report r = build_report(input_of(crossed_runs("transformer", 0.6)), fast());
  for (const auto& f : report_format_entries()) {
    std::ostringstream ss;
    make_report_sink(f.name)->write(r, ss);
    const std::string out = ss.str();
    if (f.name == "json") {
      const json j = json::parse(out);
      ASSERT_EQ(j.at("variance_sources").size(), 1u) << f.name;
      const json& v = j.at("variance_sources")[0];
      EXPECT_EQ(v.at("factors"), json({"order", "init", "dropout"}));
      EXPECT_EQ(v.at("terms").size(), 7u);
      EXPECT_EQ(v.at("terms")[1].at("source"), "init");
      EXPECT_TRUE(v.at("terms")[1].at("interval").is_array());
      EXPECT_EQ(v.at("terms").back().at("residual"), true);
      continue;
    }
    // CSV: a row per source, of kind "variance"; the rest show the table by its title.
    EXPECT_NE(out.find(f.name == "csv" ? "\nvariance,listops,,transformer,,,accuracy" : "variance comes from"), std::string::npos)
        << f.name << "\n" << out.substr(0, 2000);
  }
}

}  // namespace
}  // namespace lrb
