// SequentialClaimsConfig*: a sequential study's seeds = { first, step, max } and budget are
// validated like every key (file:line:column, before anything runs).
#include <gtest/gtest.h>

#include "suite/config/expand.h"
#include "suite/config/run_spec.h"
#include "suite/config/sweep_spec.h"
#include "suite/core/errors.h"
#include "tests/support/bad_sweeps.h"

namespace lrb {
namespace {

const char* kSequential = R"([sweep]
name = "seq"
seeds = { first = 5, step = 5, max = 60 }
budget = "1h30m"

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
name = "softmax-beats-linear"
statement = "softmax attention is more accurate than linear attention"
source = "a paper"
kind = "better"
metric = "accuracy"
a = { model = "transformer", attention = "softmax" }
b = { model = "transformer", attention = "linear" }
)";

std::string sequential_with(const std::string& from, const std::string& to) {
  std::string s = kSequential;
  const auto pos = s.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  return s.replace(pos, from.size(), to);
}

TEST(SequentialClaimsConfig, ADesignExpandsToMaxSeedsWithItsBudget) {
  const SweepSpec spec = parse_sweep(kSequential, "seq.toml");
  ASSERT_TRUE(spec.sweep.sequential);
  EXPECT_EQ(*spec.sweep.sequential, (SequentialSeeds{5, 5, 60}));
  EXPECT_EQ(spec.sweep.seeds.size(), 60u);
  ASSERT_TRUE(spec.sweep.budget_seconds);
  EXPECT_DOUBLE_EQ(*spec.sweep.budget_seconds, 5400);
  EXPECT_EQ(spec.sweep.sequential->look_seeds(), (std::vector<std::int64_t>{5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55, 60}));
  EXPECT_EQ(expand_sweep(spec).runs.size(), 120u);
  EXPECT_EQ((SequentialSeeds{2, 5, 13}.look_seeds()), (std::vector<std::int64_t>{2, 7, 12, 13}));
}

// A study's identity is mixed into every seed of its runs, not into their keys: without one
// a run seeds from base_seed exactly as before (today's folders keep their bits).
TEST(SequentialClaimsConfig, AStudysIdentityMixesIntoTheSeedsNotTheKeys) {
  RunSpec run = expand_sweep(parse_sweep(kSequential, "seq.toml")).runs.front();
  const std::string key = run.key;
  EXPECT_EQ(run.seed_base(), run.base_seed());
  run.study = "5eed";
  const std::uint64_t a = run.seed_base();
  run.study = "5eee";
  EXPECT_NE(run.seed_base(), a);
  EXPECT_NE(a, run.base_seed());
  EXPECT_EQ(run.key, key);
  EXPECT_EQ(run_key_of(run.spec), key);
}

using BadDesign = test::BadSweep;

class SequentialClaimsConfigBad : public ::testing::TestWithParam<BadDesign> {};

TEST_P(SequentialClaimsConfigBad, IsAnErrorAtItsKey) {
  test::expect_refused(GetParam(), "seq.toml");
}

INSTANTIATE_TEST_SUITE_P(
    Table, SequentialClaimsConfigBad,
    ::testing::Values(
        BadDesign{"first below 2", sequential_with("first = 5", "first = 1"), "seq.toml:3:19", "'first' must be between 2 and 100000"},
        BadDesign{"step below 1", sequential_with("step = 5", "step = 0"), "seq.toml:3:29", "'step' must be between 1 and 100000"},
        BadDesign{"max below first", sequential_with("max = 60", "max = 4"), "seq.toml:3:38", "'max' (4) must be at least 'first' (5)"},
        BadDesign{"max beyond the limit", sequential_with("max = 60", "max = 100001"), "seq.toml:3:38", "between 2 and 100000"},
        BadDesign{"too many looks", sequential_with("max = 60", "max = 1000").replace(sequential_with("max = 60", "max = 1000").find("step = 5"), 8, "step = 1"),
                  "seq.toml:3:29", "this design takes 996 looks, more than 200: take a larger 'step' (a look every 5 seeds or more)"},
        BadDesign{"unknown key", sequential_with("step = 5", "stpe = 5"), "seq.toml:3:22", "did you mean 'step'"},
        BadDesign{"missing key", sequential_with("step = 5, ", ""), "seq.toml:3:9", "needs 'step'"},
        BadDesign{"not an integer", sequential_with("step = 5", "step = 2.5"), "seq.toml:3:29", "'step' must be an integer"},
        BadDesign{"budget without a unit", sequential_with("\"1h30m\"", "\"90\""), "seq.toml:4:10", "needs its unit"},
        BadDesign{"budget with an unknown unit", sequential_with("\"1h30m\"", "\"3w\""), "seq.toml:4:10", "unknown unit 'w'"},
        BadDesign{"budget of nothing", sequential_with("\"1h30m\"", "\"0s\""), "seq.toml:4:10", "must be positive"},
        BadDesign{"budget beyond a year", sequential_with("\"1h30m\"", "\"366d\""), "seq.toml:4:10", "more than a year"},
        BadDesign{"budget as a number", sequential_with("\"1h30m\"", "5400"), "seq.toml:4:10", "must be a string"},
        BadDesign{"budget with a fixed design", sequential_with("seeds = { first = 5, step = 5, max = 60 }", "seeds = 5"),
                  "seq.toml:4:10", "'budget' bounds a sequential study"},
        BadDesign{"a design without claims", std::string(kSequential).substr(0, std::string(kSequential).find("[[claim]]")),
                  "seq.toml:3:9", "states no [[claim]]"}),
    test::bad_sweep_name);

TEST(SequentialClaimsConfig, BudgetsReadAndWriteInTheirUnits) {
  std::string problem;
  EXPECT_EQ(parse_budget("3h", problem), 10800);
  EXPECT_EQ(parse_budget("1d12h", problem), 129600);
  EXPECT_EQ(parse_budget("45s", problem), 45);
  EXPECT_EQ(parse_budget("90min", problem), 5400);
  EXPECT_EQ(parse_budget("365d", problem), kMaxBudgetSeconds);
  EXPECT_FALSE(parse_budget("1h1h", problem));
  EXPECT_NE(problem.find("twice"), std::string::npos);
  EXPECT_FALSE(parse_budget("", problem));
  EXPECT_FALSE(parse_budget("h", problem));
  EXPECT_EQ(format_budget(5400), "1h30m");
  EXPECT_EQ(format_budget(45), "45s");
}

}  // namespace
}  // namespace lrb
