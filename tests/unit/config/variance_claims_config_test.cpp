// VarianceClaimsConfig*: a variance claim ([[claim]] kind = "variance") names the streams two
// studies of one cell vary; it is checked against the sweep's [sweep] vary before anything
// runs. Its verdicts: tests/unit/report/variance_report_test.cpp.
#include <gtest/gtest.h>

#include <cctype>
#include <string>

#include "suite/config/expand.h"
#include "suite/config/sweep_spec.h"
#include "tests/support/bad_sweeps.h"

namespace lrb {
namespace {

const char* kCrossed = R"([sweep]
name = "sources"
seeds = 1
vary = { order = 2, init = 3 }
fixed = ["data"]
base_seed = 7

[train]
steps = 5
batch_size = 4

[[task]]
name = "listops"
seq_len = 64
train_size = 16

[[model]]
name = "transformer"
dim = 32
attention = ["softmax", "linear"]

[[claim]]
name = "order-as-much-as-init"
statement = "data order contributes as much variance as initialisation"
source = "Bouthillier et al. 2021"
kind = "variance"
metric = "accuracy"
of = "order"
against = ["init"]
at_least = 0.5
a = { model = "transformer", attention = "softmax" }
b = { model = "transformer", attention = "linear" }
)";

std::string crossed_with(const std::string& from, const std::string& to) {
  std::string s = kCrossed;
  const auto pos = s.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  return s.replace(pos, from.size(), to);
}

TEST(VarianceClaimsConfig, AClaimOnTheCrossedStreamsExpandsWithWhatItExpects) {
  const ExpandedSweep ex = expand_sweep(parse_sweep(kCrossed, "sources.toml"));
  ASSERT_EQ(ex.claims.size(), 1u);
  const ClaimSpec& c = ex.claims[0];
  EXPECT_EQ(c.kind, ClaimKind::Variance);
  EXPECT_EQ(c.of, std::vector<std::string>{"order"});
  EXPECT_EQ(c.against, std::vector<std::string>{"init"});
  EXPECT_EQ(c.a.expected_runs, 6u);  // order 2 x init 3
  EXPECT_EQ(c.b.expected_runs, 6u);
  EXPECT_EQ(c.claimed_text(true), "V(order) / V(init) ≥ 0.5");
  EXPECT_EQ(ClaimSpec::from_json(c.to_json()).to_json(), c.to_json());
  // Without B and against "all": A's own values against every stream the cell varies.
  std::string text = crossed_with("against = [\"init\"]\nat_least = 0.5", "against = \"all\"\nat_most = 0.9");
  text.erase(text.find("b = {"));
  const ExpandedSweep one = expand_sweep(parse_sweep(text, "sources.toml"));
  const ClaimSpec& a_only = one.claims.at(0);
  EXPECT_TRUE(a_only.against.empty());
  EXPECT_TRUE(a_only.b.match.empty());
  EXPECT_EQ(a_only.claimed_text(true), "V(order) / V(all) ≤ 0.9");
  EXPECT_EQ(ClaimSpec::from_json(a_only.to_json()).to_json(), a_only.to_json());
}

using VarianceBad = test::BadSweep;
class VarianceClaimsConfigBad : public ::testing::TestWithParam<VarianceBad> {};

TEST_P(VarianceClaimsConfigBad, IsAnErrorAtItsKeyBeforeAnythingRuns) { test::expect_refused(GetParam(), "sources.toml"); }

INSTANTIATE_TEST_SUITE_P(
    Table, VarianceClaimsConfigBad,
    ::testing::Values(
        VarianceBad{"unknown stream", crossed_with("of = \"order\"", "of = \"ordr\""), "sources.toml:28:6", "did you mean 'order'"},
        VarianceBad{"a stream held at one index", crossed_with("of = \"order\"", "of = \"dropout\""), "sources.toml:28:6",
                    "hold the dropout stream at one index"},
        VarianceBad{"a fixed stream against", crossed_with("against = [\"init\"]", "against = [\"data\"]"), "sources.toml:29:11",
                    "hold the data stream at one index"},
        VarianceBad{"the same streams twice", crossed_with("against = [\"init\"]", "against = [\"order\"]"), "sources.toml:29:11",
                    "name the same streams"},
        VarianceBad{"every stream against all", crossed_with("of = \"order\"\nagainst = [\"init\"]", "of = [\"order\", \"init\"]"),
                    "sources.toml:28:6", "ratio is 1 by definition"},
        VarianceBad{"a stream named twice", crossed_with("of = \"order\"", "of = [\"order\", \"order\"]"), "sources.toml:28:16",
                    "names 'order' twice"},
        VarianceBad{"no streams", crossed_with("of = \"order\"", "of = []"), "sources.toml:28:6", "must be a stream name or a list"},
        VarianceBad{"all as of", crossed_with("of = \"order\"", "of = \"all\""), "sources.toml:28:6", "names no stream 'all'"},
        VarianceBad{"without a bound", crossed_with("at_least = 0.5\n", ""), "sources.toml:22:1", "needs 'at_most' and/or 'at_least'"},
        VarianceBad{"without of", crossed_with("of = \"order\"\n", ""), "sources.toml:22:1", "needs 'of'"},
        VarianceBad{"with a margin", crossed_with("at_least = 0.5", "at_least = 0.5\nmargin = 0.1"), "sources.toml:31:10",
                    "'margin' does not apply to a variance claim"},
        VarianceBad{"of on a ratio claim", crossed_with("kind = \"variance\"", "kind = \"ratio\""), "sources.toml:28:6",
                    "'of' does not apply to a ratio claim"},
        VarianceBad{"one stream varied", crossed_with("vary = { order = 2, init = 3 }\nfixed = [\"data\"]", "vary = { order = 2 }\nfixed = [\"data\", \"init\"]"),
                    "sources.toml:29:11", "hold the init stream at one index"},
        VarianceBad{"a sequential design", crossed_with("seeds = 1\nvary = { order = 2, init = 3 }\nfixed = [\"data\"]", "seeds = { first = 2, step = 1, max = 3 }"),
                    "sources.toml:20:1", "reads a complete crossing of streams"}),
    test::bad_sweep_name);

}  // namespace
}  // namespace lrb
