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

TEST(ReportVarianceSources, PlainSeedsHaveNoVarianceTableAndPairOnlyWithTheirOwnTuple) {
  std::vector<RunRecord> runs = crossed_runs("transformer", 0.6);
  // Linear ran plain seeds 0..2: every stream at the seed's index. Only the transformer's
  // runs whose tuple is (s, s, s, s) pair with them: none here, as data is held at 0 — but
  // seed 0 with order 0 and init 0 draws every stream at 0, the plain seed 0's tuple.
  for (int s = 0; s < 3; ++s) {
    test::RunDraft d;
    d.model = "linear";
    d.seed = s;
    d.metrics = {{"eval_accuracy", 0.5}};
    runs.push_back(test::make_run(d));
  }
  const Analysis a = analyse(input_of(runs), fast());
  ASSERT_EQ(a.variance_sources.size(), 1u);
  ASSERT_EQ(a.comparisons.size(), 1u);
  EXPECT_EQ(a.comparisons[0].paired.n_pairs, 1u);
  EXPECT_EQ(replicate_label(a.comparisons[0].paired.seeds.at(0)), "seed 0");
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
