// ClaimsConfig*: [[claim]] tables are validated like every other key (file:line:column,
// before anything runs), and their expansion records what each side expects. The
// verdicts are tests/unit/report/claims_test.cpp's.
#include <gtest/gtest.h>

#include <cctype>
#include <ostream>
#include <string>
#include <vector>

#include "suite/config/expand.h"
#include "suite/config/sweep_spec.h"
#include "suite/core/errors.h"
#include "tests/support/bad_sweeps.h"

namespace lrb {
namespace {

// ---------------------------------------------------------------------------------------
// Validation

const char* kStudy = R"([sweep]
name = "study"
seeds = 2
base_seed = 7

[train]
steps = 5
batch_size = 4

[[task]]
name = "listops"
seq_len = [64, 128, 256]
train_size = 16

[[model]]
name = "transformer"
dim = 32
attention = ["softmax", "linear"]

[[claim]]
name = "softmax-beats-linear"
statement = "softmax attention is more accurate than linear attention"
source = "a paper, Table 2"
kind = "better"
metric = "accuracy"
where = { seq_len = 64 }
a = { model = "transformer", attention = "softmax" }
b = { model = "transformer", attention = "linear" }

[[claim]]
name = "linear-memory"
statement = "linear attention's peak memory grows linearly with N"
source = "a paper, Section 3"
kind = "scaling"
metric = "peak_bytes"
over = "seq_len"
slope = [0.8, 1.2]
a = { model = "transformer", attention = "linear" }
)";

std::string study_with(const std::string& from, const std::string& to) {
  std::string s = kStudy;
  const auto pos = s.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  return s.replace(pos, from.size(), to);
}

// The first claim alone, written [claim] instead of [[claim]].
std::string only_first_claim_as_table() {
  std::string s = kStudy;
  s = s.substr(0, s.find("[[claim]]", s.find("[[claim]]") + 1));
  return s.replace(s.find("[[claim]]"), 9, "[claim]");
}

using ClaimBad = test::BadSweep;

class ClaimsConfigBad : public ::testing::TestWithParam<ClaimBad> {};

TEST_P(ClaimsConfigBad, IsAnErrorAtItsKeyBeforeAnythingRuns) {
  test::expect_refused(GetParam(), "study.toml");
}

INSTANTIATE_TEST_SUITE_P(
    Table, ClaimsConfigBad,
    ::testing::Values(
        ClaimBad{"unknown claim key", study_with("source = \"a paper, Table 2\"", "sourse = \"a paper, Table 2\""),
                 "study.toml:23:1", "did you mean 'source'"},
        ClaimBad{"unknown kind", study_with("kind = \"better\"", "kind = \"beter\""), "study.toml:24:8", "did you mean 'better'"},
        ClaimBad{"value not in the sweep", study_with("where = { seq_len = 64 }", "where = { seq_len = 512 }"), "study.toml:26:21",
                 "no run has seq_len = 512 (the sweep has: 128, 256, 64)"},
        ClaimBad{"several cells", study_with("where = { seq_len = 64 }\n", ""), "study.toml:26:5",
                 "selects runs of several cells: they differ in seq_len"},
        ClaimBad{"unknown selector key", study_with("attention = \"softmax\" }", "atention = \"softmax\" }"), "study.toml:27:30",
                 "did you mean 'attention'"},
        ClaimBad{"bad selector value", study_with("attention = \"softmax\" }", "attention = \"sofmax\" }"), "study.toml:27:42",
                 "did you mean 'softmax'"},
        ClaimBad{"unknown model", study_with("a = { model = \"transformer\", attention = \"softmax\" }",
                                             "a = { model = \"transfomer\", attention = \"softmax\" }"),
                 "study.toml:27:15", "did you mean 'transformer'"},
        ClaimBad{"same cell twice", study_with("attention = \"linear\" }\n\n[[claim]]", "attention = \"softmax\" }\n\n[[claim]]"),
                 "study.toml:28:5", "select the same cell"},
        ClaimBad{"unknown metric", study_with("metric = \"accuracy\"", "metric = \"acuracy\""), "study.toml:25:10",
                 "has no metric 'acuracy'; did you mean 'accuracy'"},
        ClaimBad{"not-worse without a margin", study_with("kind = \"better\"", "kind = \"not-worse\""), "study.toml:20:1",
                 "needs 'margin' > 0"},
        ClaimBad{"margin past 1e15", study_with("kind = \"better\"", "kind = \"better\"\nmargin = 1e308"), "study.toml:25:10",
                 "from -1e15 to 1e15"},
        ClaimBad{"ratio factor below 1e-15", study_with("kind = \"better\"", "kind = \"ratio\"\nat_most = 1e-300"), "study.toml:25:11",
                 "at least 1e-15"},
        ClaimBad{"negative margin", study_with("kind = \"better\"", "kind = \"better\"\nmargin = -0.1"), "study.toml:25:10",
                 "must not be negative"},
        ClaimBad{"scaling with b", study_with("slope = [0.8, 1.2]", "slope = [0.8, 1.2]\nb = { model = \"transformer\" }"),
                 "study.toml:38:5", "'b' does not apply to a scaling claim"},
        ClaimBad{"scaling over two values", study_with("seq_len = [64, 128, 256]", "seq_len = [64, 128]"), "study.toml:38:5",
                 "a slope with an interval needs at least 3"},
        ClaimBad{"scaling range reversed", study_with("slope = [0.8, 1.2]", "slope = [1.2, 0.8]"), "study.toml:37:9", "needs lo ≤ hi"},
        ClaimBad{"scaling fixes its axis", study_with("a = { model = \"transformer\", attention = \"linear\" }\n",
                                                      "a = { model = \"transformer\", attention = \"linear\", seq_len = 64 }\n"),
                 "study.toml:38:5", "fixes 'seq_len', the axis the claim scales over"},
        ClaimBad{"ratio without a bound", study_with("kind = \"better\"", "kind = \"ratio\""), "study.toml:20:1",
                 "needs 'at_most' and/or 'at_least'"},
        ClaimBad{"duplicate claim name", study_with("name = \"linear-memory\"", "name = \"softmax-beats-linear\""), "study.toml:31:8",
                 "already declared"},
        ClaimBad{"claim as a table", only_first_claim_as_table(), "study.toml:20:1", "write [[claim]]"},
        ClaimBad{"a figure with no better side", study_with("metric = \"accuracy\"", "metric = \"eval_chance\""),
                 "study.toml:25:10", "'eval_chance' has no better side (runner records it"},
        ClaimBad{"max batch in a training sweep", study_with("metric = \"peak_bytes\"", "metric = \"max_batch_in_budget\""),
                 "study.toml:35:10", "recorded by measurement sweeps"},
        ClaimBad{"dominates without a cost", study_with("kind = \"better\"", "kind = \"dominates\""), "study.toml:20:1",
                 "needs 'cost'"},
        ClaimBad{"dominates on an unknown cost", study_with("kind = \"better\"", "kind = \"dominates\"\ncost = \"flop\""),
                 "study.toml:25:8", "did you mean 'flops'"},
        ClaimBad{"dominates by a factor below 1",
                 study_with("kind = \"better\"", "kind = \"dominates\"\ncost = \"flops\"\nfactor = 0.5"), "study.toml:26:10",
                 "'factor' must be at least 1"},
        ClaimBad{"dominates within a negative margin",
                 study_with("kind = \"better\"", "kind = \"dominates\"\ncost = \"flops\"\nmargin = -0.1"), "study.toml:26:10",
                 "'margin' must not be negative"},
        ClaimBad{"dominates on a metric without a better side",
                 study_with("kind = \"better\"\nmetric = \"accuracy\"", "kind = \"dominates\"\ncost = \"params\"\nmetric = \"eval_chance\""),
                 "study.toml:26:10", "'eval_chance' has no better side"},
        ClaimBad{"dominates with a ratio's bound",
                 study_with("kind = \"better\"", "kind = \"dominates\"\ncost = \"flops\"\nat_most = 0.5"), "study.toml:26:11",
                 "'at_most' does not apply to a dominates claim"},
        ClaimBad{"a factor on a better claim", study_with("kind = \"better\"", "kind = \"better\"\nfactor = 2"), "study.toml:25:10",
                 "'factor' does not apply to a better claim"}),
    test::bad_sweep_name);

TEST(ClaimsConfig, ExpansionRecordsWhatEachSideExpects) {
  const ExpandedSweep ex = expand_sweep(parse_sweep(kStudy, "study.toml"));
  ASSERT_EQ(ex.claims.size(), 2u);
  const ClaimSpec& better = ex.claims[0];
  EXPECT_EQ(better.kind, ClaimKind::Better);
  EXPECT_EQ(better.metric, "eval_accuracy");
  EXPECT_EQ(better.a.expected_runs, 2u);  // two seeds
  EXPECT_EQ(better.b.expected_runs, 2u);
  EXPECT_EQ(better.a.label, "transformer seq_len=64 attention=softmax");
  const ClaimSpec& scaling = ex.claims[1];
  EXPECT_EQ(scaling.a.expected_runs, 6u);
  EXPECT_EQ(scaling.a.expected_over, (std::vector<double>{64, 128, 256}));
  // Selectors select exactly the runs they name; the JSON form (sweep.json) round-trips.
  std::size_t selected = 0;
  for (const auto& r : ex.runs) selected += better.a.matches(r.spec);
  EXPECT_EQ(selected, 2u);
  for (const auto& c : ex.claims) EXPECT_EQ(ClaimSpec::from_json(c.to_json()).to_json(), c.to_json());
  EXPECT_EQ(better.claimed_text(true), "A − B > 0");
  EXPECT_EQ(scaling.claimed_text(false), "slope in [0.8, 1.2]");
}

TEST(ClaimsConfig, ADominatesClaimNamesItsCostByItsShortOrStoredName) {
  for (const auto& [given, stored] : std::vector<std::pair<std::string, std::string>>{
           {"flops", "train_flops"}, {"step_seconds", "step_seconds_median"}, {"step_seconds_median", "step_seconds_median"},
           {"params", "params"}, {"peak_step_bytes", "peak_step_bytes"}}) {
    const ExpandedSweep ex = expand_sweep(parse_sweep(
        study_with("kind = \"better\"", "kind = \"dominates\"\ncost = \"" + given + "\"\nmargin = 0.01\nfactor = 1.5"), "study.toml"));
    const ClaimSpec& c = ex.claims.at(0);
    EXPECT_EQ(c.kind, ClaimKind::Dominates);
    EXPECT_EQ(c.cost, stored) << given;
    EXPECT_DOUBLE_EQ(c.factor, 1.5);
    EXPECT_DOUBLE_EQ(c.margin, 0.01);
    EXPECT_EQ(c.a.expected_runs, 2u);
    EXPECT_EQ(ClaimSpec::from_json(c.to_json()).to_json(), c.to_json());
    EXPECT_EQ(c.claimed_text(true), "A − B ≥ -0.01 and cost A / B ≤ 0.666667");
  }
}

TEST(ClaimsConfig, APrecisionSelectorFindsFp32RunsThatLeaveItOut) {
  // fp32 runs' specs have no train.precision (their keys predate it): a side that names
  // precision = "fp32" still selects them, and only them.
  std::string text = kStudy;
  const auto replace = [&text](const std::string& from, const std::string& to) {
    ASSERT_NE(text.find(from), std::string::npos) << from;
    text.replace(text.find(from), from.size(), to);
  };
  replace("batch_size = 4", "batch_size = 4\nprecision = [\"fp32\", \"bf16\"]");
  replace("a = { model = \"transformer\", attention = \"softmax\" }",
          "a = { model = \"transformer\", attention = \"softmax\", precision = \"bf16\" }");
  replace("b = { model = \"transformer\", attention = \"linear\" }",
          "b = { model = \"transformer\", attention = \"softmax\", precision = \"fp32\" }");
  replace("slope = [0.8, 1.2]\na = { model = \"transformer\", attention = \"linear\" }",
          "slope = [0.8, 1.2]\na = { model = \"transformer\", attention = \"linear\", precision = \"fp32\" }");
  const ExpandedSweep ex = expand_sweep(parse_sweep(text, "study.toml"));
  const ClaimSpec& c = ex.claims[0];
  EXPECT_EQ(c.a.expected_runs, 2u);
  EXPECT_EQ(c.b.expected_runs, 2u);
  for (const auto& r : ex.runs) {
    const bool softmax64 = r.spec.at("model").at("options").at("attention") == "softmax" && r.seq_len() == 64;
    EXPECT_EQ(c.a.matches(r.spec), softmax64 && r.train.precision == "bf16");
    EXPECT_EQ(c.b.matches(r.spec), softmax64 && r.train.precision == "fp32");
    if (r.train.precision == "fp32") {
      EXPECT_FALSE(r.spec.at("train").contains("precision"));
    }
  }
}

TEST(ClaimsConfig, ClaimsOfAnotherBaseSeedDoNotSelectThisSweepsRuns) {
  const ExpandedSweep ex = expand_sweep(parse_sweep(kStudy, "study.toml"));
  std::string other = kStudy;
  other.replace(other.find("base_seed = 7"), 13, "base_seed = 8");
  const ExpandedSweep ex8 = expand_sweep(parse_sweep(other, "other.toml"));
  for (const auto& r : ex8.runs) EXPECT_FALSE(ex.claims[0].a.matches(r.spec));
}

}  // namespace
}  // namespace lrb
