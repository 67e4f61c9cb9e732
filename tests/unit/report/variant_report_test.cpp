// Evaluation variants in reports: claims that pair two variants of the same runs by seed,
// and the variant tables (paired difference from the runs as trained, cost, probes).
#include <gtest/gtest.h>

#include "suite/config/run_spec.h"
#include "suite/report/claims/claims.h"
#include "suite/report/variants.h"
#include "tests/support/report_runs.h"

namespace lrb {
namespace {

CellSelector sret_side(const std::string& variant) {
  CellSelector s;
  s.match = {{"model.name", "sret"}};
  s.variant = variant;
  s.label = "sret" + (variant.empty() ? "" : " variant=" + variant);
  s.expected_runs = 4;
  return s;
}

TEST(VariantReport, ClaimsPairTwoVariantsOfTheSameRuns) {
  ClaimSpec c;
  c.name = "zero-within-1";
  c.kind = ClaimKind::NotWorse;
  c.metric = "eval_accuracy";
  c.margin = 0.01;
  c.a = sret_side("merge-zero");
  c.b = sret_side("merge-dup");
  ClaimSpec trained = c;
  trained.name = "dup-vs-trained";
  trained.kind = ClaimKind::Better;
  trained.margin = 0;
  trained.a = sret_side("");
  trained.b = sret_side("merge-dup");
  ClaimSpec memory;
  memory.name = "memory";
  memory.kind = ClaimKind::Ratio;
  memory.metric = "infer_peak_bytes_b16";
  memory.at_least = 0.577;
  memory.at_most = 0.677;
  memory.a = sret_side("merge-dup");
  memory.b = sret_side("full");
  const auto r = evaluate_claims({c, trained, memory}, test::variant_runs(), ClaimSettings{});
  ASSERT_EQ(r.size(), 3u);
  // zero is 0.035 below dup on every seed (± 0.004): refuted, paired over 4 seeds.
  EXPECT_EQ(r[0].n, 4u);
  EXPECT_NEAR(*r[0].estimate, -0.035, 1e-12);
  EXPECT_EQ(r[0].verdict, Verdict::Refuted) << r[0].why;
  EXPECT_EQ(r[1].verdict, Verdict::Supported) << r[1].why;
  EXPECT_NEAR(*r[1].estimate, 0.015, 1e-12);
  EXPECT_NEAR(*r[2].estimate, 0.61, 1e-12);
  EXPECT_EQ(r[2].verdict, Verdict::Supported) << r[2].why;
}

TEST(VariantReport, TablesPairEachVariantWithTheRunsAsTrained) {
  const auto groups = analyse_variants(test::variant_runs());
  ASSERT_EQ(groups.size(), 1u);
  const VariantGroup& g = groups[0];
  EXPECT_EQ(g.runs, 4u);
  ASSERT_EQ(g.rows.size(), 3u);
  EXPECT_EQ(g.rows[1].name, "merge-dup");
  ASSERT_EQ(g.rows[1].delta.size(), 4u);
  ASSERT_TRUE(g.rows[1].delta_ci);
  EXPECT_LT(g.rows[1].delta_ci->hi, 0);
  EXPECT_NEAR(g.rows[0].delta[0], 0.0, 0);
  ASSERT_EQ(g.rows[1].cost.size(), 2u);
  EXPECT_EQ(*g.rows[1].cost[1].peak_bytes, 610);
  EXPECT_EQ(g.rows[1].cost[1].samples_per_s.size(), 12u);  // 3 repeats x 4 runs
  ASSERT_EQ(g.rows[2].probes.size(), 1u);
  EXPECT_NEAR(*g.rows[2].probes[0].cosine, 0.6, 1e-12);
  const auto tables = variant_tables(groups, "fashion-mnist");
  ASSERT_EQ(tables.size(), 3u);
  EXPECT_EQ(tables[0].rows.size(), 3u);
  EXPECT_EQ(tables[0].rows[0][1].text, "merge=false");
  EXPECT_EQ(tables[0].rows[2][1].text, "unmerge=zero");  // what sets it apart from the other merging variants
  // Batch 16 at 0.1, 0.16 and 0.2 s in each of 4 runs: 160, 100 and 80 samples/s.
  EXPECT_EQ(tables[1].rows[1][4].text, "100/s [80/s, 160/s]");
  EXPECT_TRUE(variant_tables(groups, "listops").empty());
  EXPECT_EQ(variants_json(groups)[0]["variants"][1]["delta_vs_trained"].size(), 4u);
}

}  // namespace
}  // namespace lrb
