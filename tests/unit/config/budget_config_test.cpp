// A run's length from a budget, a target, and a width chosen to match a count: each is
// validated with file:line:column, expands to what it says, and is part of the run's identity.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "suite/config/expand.h"
#include "suite/config/size_match.h"
#include "suite/config/sweep_spec.h"
#include "suite/registry/registry.h"
#include "tests/support/bad_sweeps.h"

namespace lrb {
namespace {

const char* kBudget = R"(
[sweep]
name = "b"
seeds = 2
base_seed = 3

[train]
flops = "2e10"
batch_size = 4
eval_every = 5

[[task]]
name = "listops"
seq_len = 64
train_size = 16

[[model]]
name = "transformer"
dim = 32
heads = 4

[[model]]
name = "transformer"
dim = 64
heads = 4
)";

std::string with(const std::string& from, const std::string& to) {
  std::string s = kBudget;
  const auto pos = s.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  return s.replace(pos, from.size(), to);
}

double forward_flops(const RunSpec& r) {
  return ModelRegistry::instance().find(r.model_name())->flops(r.model_options(), r.task_info);
}

TEST(RunLengthConfig, AFlopBudgetGivesEachModelTheStepsItAffords) {
  const ExpandedSweep ex = expand_sweep(parse_sweep(kBudget, "b.toml"));
  ASSERT_EQ(ex.runs.size(), 4u);
  std::set<std::int64_t> steps;
  for (const auto& r : ex.runs) {
    const double per_step = 3 * forward_flops(r) * 4;
    EXPECT_EQ(r.train.steps, static_cast<std::int64_t>(std::floor(2e10 / per_step))) << r.model_options().dump();
    EXPECT_GE(r.train.steps, 1);
    EXPECT_DOUBLE_EQ(r.spec.at("train").at("flops").get<double>(), 2e10) << "the budget is part of the run";
    steps.insert(r.train.steps);
  }
  EXPECT_EQ(steps.size(), 2u) << "the wider model affords fewer steps";
  // The derived length is what makes the runs differ, so their keys do.
  EXPECT_NE(ex.runs[0].key, ex.runs[2].key);
  // Shown by validate: the budget, the steps, the warm-up and the decay.
  ASSERT_FALSE(ex.derivations.empty());
  EXPECT_NE(ex.derivations[0].find("flops 2e+10 -> "), std::string::npos) << ex.derivations[0];
  // Models trained to one budget share a condition: the derived steps are not a setting.
  std::vector<json> specs;
  for (const auto& r : ex.runs) specs.push_back(r.spec);
  for (const auto& p : varying_paths(specs)) EXPECT_NE(p, "train.steps");
}

TEST(RunLengthConfig, AWarmUpShareFollowsTheDerivedSteps) {
  const ExpandedSweep ex = expand_sweep(parse_sweep(with("batch_size = 4", "batch_size = 4\nwarmup_share = 0.1"), "b.toml"));
  for (const auto& r : ex.runs) {
    EXPECT_EQ(r.train.warmup_steps, std::llround(0.1 * static_cast<double>(r.train.steps)));
    EXPECT_DOUBLE_EQ(r.train.warmup_share, 0.1);
  }
}

TEST(RunLengthConfig, ATimeBudgetLeavesTheStepsToTheClock) {
  const std::string text = with("flops = \"2e10\"", "seconds = 30") + "";
  std::string named = text;
  named.replace(named.find("base_seed = 3"), 13, "base_seed = 3\ndevice = \"cpu\"");
  const ExpandedSweep ex = expand_sweep(parse_sweep(named, "b.toml"));
  for (const auto& r : ex.runs) {
    EXPECT_EQ(r.train.steps, 0);
    EXPECT_TRUE(r.train.time_budget());
    EXPECT_DOUBLE_EQ(r.spec.at("train").at("seconds").get<double>(), 30);
  }
}

TEST(RunLengthConfig, ATargetIsPartOfTheRunAndNamesTheStoredMetric) {
  const ExpandedSweep ex =
      expand_sweep(parse_sweep(with("eval_every = 5", "eval_every = 5\ntarget = { metric = \"accuracy\", value = 0.4 }"), "b.toml"));
  for (const auto& r : ex.runs) {
    ASSERT_TRUE(r.train.target);
    EXPECT_EQ(r.train.target->metric, "eval_accuracy");
    EXPECT_DOUBLE_EQ(r.train.target->value, 0.4);
    EXPECT_EQ(r.spec.at("train").at("target"), (json{{"metric", "eval_accuracy"}, {"value", 0.4}}));
  }
  const ExpandedSweep without = expand_sweep(parse_sweep(kBudget, "b.toml"));
  EXPECT_NE(ex.runs[0].key, without.runs[0].key);
}

TEST(RunLengthConfig, RunsWithoutTheNewOptionsKeepTheirSpecs) {
  const std::string steps = with("flops = \"2e10\"", "steps = 7");
  const ExpandedSweep ex = expand_sweep(parse_sweep(steps, "b.toml"));
  for (const auto& r : ex.runs) {
    const json& train = r.spec.at("train");
    for (const char* absent : {"flops", "seconds", "warmup_share", "target"}) EXPECT_FALSE(train.contains(absent)) << absent;
    EXPECT_FALSE(r.spec.at("model").contains("match"));
    EXPECT_EQ(r.train.steps, 7);
  }
}

// The transformer's width by parameters: brute force over every width it takes.
TEST(RunLengthConfig, AMatchedWidthIsTheNearestByTheModelsOwnCount) {
  std::string text = with("dim = 32\nheads = 4\n", "dim = { match = \"params\", to = 30000 }\nheads = 4\n");
  text = text.substr(0, text.find("[[model]]\nname = \"transformer\"\ndim = 64"));
  const ExpandedSweep ex = expand_sweep(parse_sweep(text, "b.toml"));
  ASSERT_EQ(ex.runs.size(), 2u);
  const RunSpec& r = ex.runs[0];
  const ModelEntry& entry = *ModelRegistry::instance().find("transformer");
  const std::int64_t chosen = r.model_options().at("dim").get<std::int64_t>();
  const json& match = r.spec.at("model").at("match").at("dim");
  EXPECT_EQ(match.at("figure"), "params");
  EXPECT_DOUBLE_EQ(match.at("to").get<double>(), 30000);
  json options = r.model_options();
  EXPECT_DOUBLE_EQ(match.at("count").get<double>(), entry.params(options, r.task_info));
  double best = INFINITY;
  std::int64_t best_dim = 0;
  for (std::int64_t d = 4; d <= 256; d += 4) {
    options["dim"] = d;
    const double gap = std::fabs(entry.params(options, r.task_info) - 30000);
    if (gap < best) best = gap, best_dim = d;
  }
  EXPECT_EQ(chosen, best_dim);
  EXPECT_NE(ex.derivations.at(0).find("dim = " + std::to_string(chosen)), std::string::npos) << ex.derivations.at(0);
  // The entrant is its target, whatever width it took.
  EXPECT_EQ(value_at_path(r.spec, "model.dim"), json("params≈30000"));
}

TEST(RunLengthConfig, APerTaskTargetSizesEachTaskByItsOwn) {
  std::string text = with("dim = 32\nheads = 4\n", "dim = { match = \"params\", to = { listops = 30000, retrieval = 60000 } }\nheads = 4\n");
  text = text.substr(0, text.find("[[model]]\nname = \"transformer\"\ndim = 64"));
  text.replace(text.find("[[model]]"), 9, "[[task]]\nname = \"retrieval\"\nseq_len = 64\ntrain_size = 16\n\n[[model]]");
  const ExpandedSweep ex = expand_sweep(parse_sweep(text, "b.toml"));
  std::map<std::string, double> to;
  for (const auto& r : ex.runs) to[r.task_name()] = r.spec.at("model").at("match").at("dim").at("to").get<double>();
  EXPECT_EQ(to, (std::map<std::string, double>{{"listops", 30000}, {"retrieval", 60000}}));
  const auto bad = [&](const std::string& from, const std::string& into, const std::string& says) {
    std::string t = text;
    t.replace(t.find(from), from.size(), into);
    try {
      (void)expand_sweep(parse_sweep(t, "bad.toml"));
      ADD_FAILURE() << "accepted: " << into;
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).rfind("bad.toml:", 0), 0u) << e.what();
    }
  };
  bad("retrieval = 60000", "retreival = 60000", "which this sweep does not run; did you mean 'retrieval'");
  bad(", retrieval = 60000", "", "has no target for task 'retrieval'");
}

using BadBudget = test::BadSweep;

class RunLengthConfigBad : public ::testing::TestWithParam<BadBudget> {};

TEST_P(RunLengthConfigBad, NamesFileLineColumnAndSaysWhatToDo) {
  test::expect_refused(GetParam(), "bad.toml");
}

INSTANTIATE_TEST_SUITE_P(
    Table, RunLengthConfigBad,
    ::testing::Values(
        BadBudget{"zero budget", with("flops = \"2e10\"", "flops = 0"), "bad.toml:8:1", "is no budget"},
        BadBudget{"negative budget", with("flops = \"2e10\"", "flops = -5.0"), "bad.toml:8:9", "must be at least 0"},
        BadBudget{"not a number", with("flops = \"2e10\"", "flops = \"lots\""), "bad.toml:8:9", "is not a number"},
        BadBudget{"two lengths", with("flops = \"2e10\"", "flops = \"2e10\"\nsteps = 4"), "bad.toml:9:1", "both set the run's length"},
        BadBudget{"steps and seconds", with("flops = \"2e10\"", "steps = 4\nseconds = 5"), "bad.toml:8:1", "give one of steps, flops and seconds"},
        BadBudget{"budget below a step", with("flops = \"2e10\"", "flops = 1000"), "bad.toml:8:1", "gives no step"},
        BadBudget{"budget above the cap", with("flops = \"2e10\"", "flops = 1e29"), "bad.toml:8:1", "more than 100000000"},
        BadBudget{"time budget without a named device", with("flops = \"2e10\"", "seconds = 60"), "bad.toml:8:1", "machine-bound"},
        BadBudget{"both warm-ups", with("eval_every = 5", "eval_every = 5\nwarmup_share = 0.1\nwarmup_steps = 2"), "bad.toml:11:1", "both set the warm-up"},
        BadBudget{"warm-up as long as the budget", with("eval_every = 5", "eval_every = 5\nwarmup_steps = 100000"), "bad.toml:11:1",
                  "is not shorter than"},
        BadBudget{"target metric the task lacks", with("eval_every = 5", "eval_every = 5\ntarget = { metric = \"micro_f1\", value = 0.5 }"),
                  "bad.toml:11:21", "has no metric 'micro_f1'"},
        BadBudget{"target of a run figure", with("eval_every = 5", "eval_every = 5\ntarget = { metric = \"peak_bytes\", value = 5 }"),
                  "bad.toml:11:21", "not an evaluation metric"},
        BadBudget{"target without value", with("eval_every = 5", "eval_every = 5\ntarget = { metric = \"accuracy\" }"), "bad.toml:11:1",
                  "'value' is missing"},
        BadBudget{"target unknown key", with("eval_every = 5", "eval_every = 5\ntarget = { metric = \"accuracy\", valeu = 1 }"),
                  "bad.toml:11:33", "did you mean 'value'"},
        BadBudget{"target without evaluations", with("eval_every = 5", "target = { metric = \"accuracy\", value = 0.5 }"), "bad.toml:10:1",
                  "set eval_every > 0"},
        BadBudget{"match no width reaches", with("dim = 32\nheads = 4\n", "dim = { match = \"params\", to = 10 }\nheads = 4\n"),
                  "bad.toml:19:1", "already gives"},
        BadBudget{"match by an unknown figure", with("dim = 32\nheads = 4\n", "dim = { match = \"bytes\", to = 1e5 }\nheads = 4\n"),
                  "bad.toml:19:17", "'match' must be \"params\""},
        BadBudget{"match with an unknown key", with("dim = 32\nheads = 4\n", "dim = { match = \"params\", too = 1e5 }\nheads = 4\n"),
                  "bad.toml:19:27", "did you mean 'to'"},
        BadBudget{"match of a text option", with("dim = 32\nheads = 4\n", "dim = 32\nheads = 4\nattention = { match = \"params\", to = 1e5 }\n"),
                  "bad.toml:21:1", "only an integer option"},
        BadBudget{"match beyond what is built", with("dim = 32\nheads = 4\n", "dim = { match = \"params\", to = 1e12 }\nheads = 4\n"),
                  "bad.toml:19:32", "set 'dim' directly"}));

// The search itself, on counts chosen for it.
TEST(SizeMatch, DoublesThenBisectsAndStepsOverRefusedWidths) {
  int counted = 0;
  SizeSearch s;
  s.smallest = 1;
  s.largest = 1 << 20;
  s.to = 10000;
  s.count = [&](std::int64_t w) -> std::optional<double> {
    ++counted;
    if (w % 3 != 0) return std::nullopt;  // the model takes multiples of 3 only
    return static_cast<double>(w) * static_cast<double>(w);
  };
  const SizeMatchResult r = match_size(s);
  ASSERT_TRUE(r.size) << r.problem;
  EXPECT_EQ(r.size->value, 99);  // 99² = 9801 against 102² = 10404
  EXPECT_LT(counted, 200) << "a search, not a scan";
  s.to = 9801;
  EXPECT_EQ(match_size(s).size->value, 99) << "an exact count is taken";
  s.to = (9801.0 + 10404.0) / 2;
  EXPECT_EQ(match_size(s).size->value, 99) << "a tie takes the smaller width";
  s.to = 2;
  EXPECT_NE(match_size(s).problem.find("smallest value it takes, 3, already gives 9"), std::string::npos);
  s.largest = 50;
  s.to = 1e6;
  EXPECT_NE(match_size(s).problem.find("largest value"), std::string::npos) << match_size(s).problem;
}

}  // namespace
}  // namespace lrb
