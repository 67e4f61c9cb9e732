// Sequential studies end to end (tests/support/sweeps.h tiny_sequential_sweep): the waves a
// study draws, its report's looks, a stop at any moment resumed by the same command, a
// budget, and the same verdicts from 2 MPI ranks (SlowSequential*, label slow;
// MpiSequential*, label mpi). Under Slurm: tests/integration/slurm_test.cpp.
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "suite/core/exit_codes.h"
#include "tests/support/results.h"
#include "tests/support/subprocess.h"
#include "tests/support/sweeps.h"

namespace lrb {
namespace {

using namespace std::chrono_literals;
using json = nlohmann::json;
using test::Child;
using test::TempDir;

// Every folder here replays one study (--study-id): the same seeds, so folders compare run
// by run. Without it each folder is a study of its own, with seeds of its own.
constexpr const char* kStudy = "5eed";

std::vector<std::string> run_cmd(const TempDir& t, const std::string& out) {
  return {test::lrbench(), "run", (t / "seq.toml").string(), "--out", (t / out).string(), "--study-id", kStudy};
}

json report_json(const std::filesystem::path& dir) {
  const auto r = test::run({test::lrbench(), "report", dir.string(), "--format", "json", "-o", "-"});
  EXPECT_EQ(r.code, kExitDone) << r.output;
  return json::parse(r.output.substr(r.output.find('{')));
}

// What a study decided, comparable across runs of it: each claim's verdict, looks and stop.
json decisions(const json& report) {
  json out = json::array();
  for (const auto& c : report.at("claims"))
    out.push_back({{"name", c.at("name")}, {"verdict", c.at("verdict")}, {"looks", c.at("looks")}, {"stopped", c.at("stopped")}});
  return out;
}

std::map<std::string, int> runs_per_model(const std::filesystem::path& dir) {
  std::map<std::string, int> n;
  for (const auto& [key, rec] : test::read_runs(dir)) {
    std::string m = rec.spec.at("model").at("name").get<std::string>();
    if (rec.spec.at("model").at("options").contains("attention"))
      m += "/" + rec.spec.at("model").at("options").at("attention").get<std::string>();
    ++n[m];
  }
  return n;
}

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The uninterrupted one-process study, run once for the suite: what every other way of
// running it must reproduce.
class SequentialStudy : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    test::write_text(*dir_ / "seq.toml", test::tiny_sequential_sweep());
    reference_ = test::run(run_cmd(*dir_, "ref"));
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override { ASSERT_EQ(reference_.code, kExitDone) << reference_.output; }
  static std::filesystem::path reference() { return *dir_ / "ref"; }
  // Every run of the reference, bit-identical, and the same decisions; with several ranks,
  // perhaps a run of wave 2 that an idle rank started (test::speculative_run_of_tiny_sequential_sweep).
  static void expect_same_study(const std::filesystem::path& out, bool ranks_may_speculate = false) {
    const auto ra = test::read_runs(reference()), rb = test::read_runs(out);
    for (const auto& [key, rec] : ra) {
      ASSERT_TRUE(rb.count(key)) << key;
      EXPECT_EQ(test::deterministic_difference(rec, rb.at(key)), "") << key;
    }
    for (const auto& [key, rec] : rb) {
      if (ra.count(key)) continue;
      const std::string model = rec.spec.at("model").at("name").get<std::string>();
      const auto seed = rec.spec.at("seed_index").get<std::int64_t>();
      EXPECT_TRUE(ranks_may_speculate && test::speculative_run_of_tiny_sequential_sweep(model, seed))
          << "a run the one-process study did not run: " << key << " (" << model << ", seed index " << seed << ")";
    }
    EXPECT_EQ(decisions(report_json(out)), decisions(report_json(reference())));
  }
  static TempDir* dir_;
  static test::Result reference_;
};
TempDir* SequentialStudy::dir_ = nullptr;
test::Result SequentialStudy::reference_{-1, ""};

using SlowSequential = SequentialStudy;
using MpiSequential = SequentialStudy;

TEST_F(SlowSequential, DrawsSeedsOnlyForOpenClaimsAndTheReportShowsEveryLook) {
  // The memory claim is decided at look 1, so Longformer stops at 2 seeds; BigBird feeds no
  // claim and keeps its first 2; the accuracy claim stays open to max (8).
  EXPECT_EQ(runs_per_model(reference()),
            (std::map<std::string, int>{{"transformer/softmax", 8}, {"transformer/linear", 8}, {"longformer", 2}, {"bigbird", 2}}));
  EXPECT_NE(reference_.output.find("sequential study ended: ended after 4 of 4 looks: max reached"), std::string::npos)
      << reference_.output;
  const json report = report_json(reference());
  const json& accuracy = report.at("claims").at(0);
  const json& memory = report.at("claims").at(1);
  EXPECT_EQ(accuracy.at("design"), "sequential");
  EXPECT_EQ(accuracy.at("looks").size(), 4u);
  EXPECT_EQ(accuracy.at("stopped"), "reached max (8 seeds) undecided");
  EXPECT_EQ(accuracy.at("verdict"), "inconclusive");
  EXPECT_EQ(memory.at("looks").size(), 1u);
  EXPECT_EQ(memory.at("stopped"), "decided at look 1 (2 seeds)");
  for (const auto& l : accuracy.at("looks")) {
    for (const char* key : {"look", "seeds", "n", "estimate", "interval", "confidence", "alpha", "fraction", "z_boundary", "verdict"})
      EXPECT_TRUE(l.contains(key)) << key;
  }
  EXPECT_FALSE(accuracy.at("plan").is_null()) << "an open claim is planned";
  const json& study = report.at("studies").at(0);
  EXPECT_EQ(study.at("state"), "max reached");
  EXPECT_EQ(study.at("looks_done"), 4);
  EXPECT_EQ(study.at("look_seeds"), json::array({2, 4, 6, 8}));
  const json log = json::parse(read_text(reference() / "study.json"));
  EXPECT_EQ(log.at("ended"), "max reached");
  EXPECT_EQ(log.at("study_id"), kStudy);
  EXPECT_EQ(study.at("study_id"), kStudy);
  for (const auto& [key, rec] : test::read_runs(reference())) EXPECT_EQ(rec.provenance.at("study_id"), kStudy) << key;
  // The terminal report says how each verdict was reached.
  const auto text = test::run({test::lrbench(), "report", reference().string()});
  EXPECT_NE(text.output.find("claims — looks of the sequential design"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("window-less-memory: decided at look 1 (2 seeds)"), std::string::npos) << text.output;
  // Status: nothing left, the study ended.
  const auto st = test::run({test::lrbench(), "status", reference().string()});
  EXPECT_NE(st.output.find("total=20 finished=20"), std::string::npos) << st.output;
  EXPECT_NE(st.output.find("remaining=0 look=4/4 open=0 state=max-reached"), std::string::npos) << st.output;
}

TEST_F(SlowSequential, RunningTheFinishedStudyAgainDoesNothing) {
  const auto again = test::run(run_cmd(*dir_, "ref"));
  EXPECT_EQ(again.code, kExitDone) << again.output;
  EXPECT_NE(again.output.find("0 ran now"), std::string::npos) << again.output;
  EXPECT_EQ(decisions(report_json(reference())).size(), 2u);
}

// A stop at any moment — in the first milliseconds, or in the middle of a later wave — ends
// with 3, and the same command carries on from the last look to the same study.
// A new folder is a new study: without --study-id it takes an identity of its own and draws
// other seeds than every study before it (issue 66: the same base_seed used to replay the
// seeds already looked at). The same id again is the same study, seed for seed; a folder's
// id cannot be changed.
TEST_F(SlowSequential, ANewFolderIsANewStudyWithSeedsOfItsOwn) {
  TempDir t;
  test::write_text(t / "seq.toml", test::tiny_sequential_sweep());
  std::vector<std::string> cmd = run_cmd(t, "fresh");
  cmd.resize(cmd.size() - 2);  // no --study-id
  const auto fresh = test::run(cmd);
  ASSERT_EQ(fresh.code, kExitDone) << fresh.output;
  const std::string id = json::parse(read_text(t / "fresh" / "study.json")).at("study_id");
  EXPECT_EQ(id.size(), 16u);
  EXPECT_NE(id, kStudy);
  EXPECT_NE(fresh.output.find("study " + id), std::string::npos) << fresh.output;
  const auto ref = test::read_runs(reference()), other = test::read_runs(t / "fresh");
  std::size_t same_key = 0, same_loss = 0;
  for (const auto& [key, rec] : other) {
    EXPECT_EQ(rec.provenance.at("study_id"), id);
    const auto it = ref.find(key);
    if (it == ref.end()) continue;
    ++same_key;
    same_loss += rec.metrics.at("eval_loss") == it->second.metrics.at("eval_loss");
  }
  EXPECT_GT(same_key, 4u) << "the runs keep their keys";
  EXPECT_EQ(same_loss, 0u) << "and draw other seeds";
  const auto changed = test::run({test::lrbench(), "run", (t / "seq.toml").string(), "--out", (t / "fresh").string(), "--study-id", kStudy});
  EXPECT_EQ(changed.code, kExitUsage) << changed.output;
  EXPECT_NE(changed.output.find("the study in"), std::string::npos) << changed.output;
  const auto bad = test::run({test::lrbench(), "run", (t / "seq.toml").string(), "--out", (t / "bad").string(), "--study-id", "Z!"});
  EXPECT_EQ(bad.code, kExitUsage) << bad.output;
  EXPECT_NE(bad.output.find("is not a study id"), std::string::npos) << bad.output;
}

TEST_F(SlowSequential, AStopAtAnyMomentResumesToTheSameStudy) {
  for (const auto delay : {std::chrono::milliseconds(30), std::chrono::milliseconds(0)}) {
    TempDir t;
    test::write_text(t / "seq.toml", test::tiny_sequential_sweep());
    {
      Child c(run_cmd(t, "out"));
      if (delay.count() > 0) std::this_thread::sleep_for(delay);
      else ASSERT_TRUE(c.wait_for_output("look 3 of 4", 120s)) << c.output();
      c.signal(SIGTERM);
      const int code = c.wait(120s);
      EXPECT_TRUE(code == kExitStopped || code == kExitDone) << code << "\n" << c.output();
    }
    const auto resumed = test::run(run_cmd(t, "out"));
    ASSERT_EQ(resumed.code, kExitDone) << resumed.output;
    expect_same_study(t / "out");
  }
}

// Once the budget is spent no run starts (the one in progress finishes): the study ends
// with its open claims said so, and the same command runs nothing more. Runs of 300 steps
// take several budgets of 1 s each.
TEST_F(SlowSequential, ASpentBudgetEndsTheStudyAndSaysSo) {
  TempDir t;
  test::write_text(t / "seq.toml", test::tiny_sequential_sweep(300, "budget = \"1s\"\n"));
  const auto r = test::run(run_cmd(t, "out"));
  ASSERT_EQ(r.code, kExitDone) << r.output;
  EXPECT_NE(r.output.find("looks: budget spent"), std::string::npos) << r.output;
  EXPECT_LT(test::read_runs(t / "out").size(), 8u) << "not even wave 1 fits in 1 s";
  const json report = report_json(t / "out");
  EXPECT_EQ(report.at("claims").at(0).at("stopped"), "budget spent before look 1 of 4");
  EXPECT_EQ(report.at("studies").at(0).at("state"), "budget spent");
  EXPECT_GE(report.at("studies").at(0).at("spent_s").get<double>(), 1.0);
  const auto again = test::run(run_cmd(t, "out"));
  EXPECT_EQ(again.code, kExitDone) << again.output;
  EXPECT_NE(again.output.find("0 ran now"), std::string::npos) << again.output;
}

TEST_F(SlowSequential, AChangedDesignIsRefusedInTheSameFolder) {
  TempDir t;
  std::string spec = test::tiny_sequential_sweep();
  test::write_text(t / "seq.toml", spec);
  // A fixed-design folder first: a sequential design must not start on runs already seen.
  std::string fixed = spec;
  fixed.replace(fixed.find("seeds = { first = 2, step = 2, max = 8 }"), 40, "seeds = 2");
  test::write_text(t / "fixed.toml", fixed);
  ASSERT_EQ(test::run({test::lrbench(), "run", (t / "fixed.toml").string(), "--out", (t / "out").string()}).code, kExitDone);
  const auto refused = test::run(run_cmd(t, "out"));
  EXPECT_EQ(refused.code, kExitUsage) << refused.output;
  EXPECT_NE(refused.output.find("seq.toml:3:9"), std::string::npos) << refused.output;
  EXPECT_NE(refused.output.find("must start before any result is seen"), std::string::npos) << refused.output;
  // A study's design cannot change once it has looked.
  std::string other = spec;
  other.replace(other.find("max = 8"), 7, "max = 10");
  test::write_text(t / "other.toml", other);
  ASSERT_EQ(test::run(run_cmd(t, "seq")).code, kExitDone);
  const auto changed = test::run({test::lrbench(), "run", (t / "other.toml").string(), "--out", (t / "seq").string()});
  EXPECT_EQ(changed.code, kExitUsage) << changed.output;
  EXPECT_NE(changed.output.find("cannot change once it has looked at results"), std::string::npos) << changed.output;
  // Nor can its claims: a changed, a new or a missing claim would re-judge the same looks.
  const json before = report_json(t / "seq");
  auto refused_claims = [&](const std::string& text, const std::string& why) {
    test::write_text(t / "claims.toml", text);
    const auto r = test::run({test::lrbench(), "run", (t / "claims.toml").string(), "--out", (t / "seq").string()});
    EXPECT_EQ(r.code, kExitUsage) << r.output;
    EXPECT_NE(r.output.find(why), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("claims cannot change once it has looked"), std::string::npos) << r.output;
  };
  std::string margin = spec;
  margin.replace(margin.find("metric = \"accuracy\"\n"), 20, "metric = \"accuracy\"\nmargin = 0.5\n");
  refused_claims(margin, "claim 'softmax-more-accurate' changed since the study");
  const auto second = spec.find("[[claim]]\nname = \"window-less-memory\"");
  refused_claims(spec.substr(0, second), "claim 'window-less-memory' of the study");
  std::string renamed = spec;
  renamed.replace(renamed.find("window-less-memory"), 18, "window-lean-memory");
  refused_claims(renamed, "claim 'window-lean-memory' is new to the study");
  EXPECT_EQ(decisions(report_json(t / "seq")), decisions(before));  // the refusals changed nothing
  // Its words may change: what is judged is the same.
  std::string words = spec;
  words.replace(words.find("source = \"a test\""), 17, "source = \"a test, reworded\"");
  test::write_text(t / "claims.toml", words);
  const auto reworded = test::run({test::lrbench(), "run", (t / "claims.toml").string(), "--out", (t / "seq").string()});
  EXPECT_EQ(reworded.code, kExitDone) << reworded.output;
}

// Two ranks: the same looks and verdicts, every run bit-identical to the one-process study's
// (and perhaps a Longformer run of wave 2 that a rank idle at look 1 started).
TEST_F(MpiSequential, TwoRanksJudgeTheStudyAsOneProcessDoes) {
  TempDir t;
  test::write_text(t / "seq.toml", test::tiny_sequential_sweep());
  std::vector<std::string> cmd = test::mpirun(2);
  for (const auto& a : run_cmd(t, "out")) cmd.push_back(a);
  const auto r = test::run(cmd);
  ASSERT_EQ(r.code, kExitDone) << r.output;
  expect_same_study(t / "out", /*ranks_may_speculate=*/true);
  std::set<int> ranks;
  for (const auto& [key, rec] : test::read_runs(t / "out")) ranks.insert(rec.provenance.at("rank").get<int>());
  EXPECT_EQ(ranks.size(), 2u);
}

// Two ranks stopped in the middle of a later wave (lrbench run --ranks 2 forwards the stop to
// every rank): exit 3, and the same command finishes the same study.
TEST_F(MpiSequential, AStopOfBothRanksMidWaveResumesToTheSameStudy) {
  TempDir t;
  test::write_text(t / "seq.toml", test::tiny_sequential_sweep());
  std::vector<std::string> cmd = run_cmd(t, "out");
  cmd.insert(cmd.end(), {"--ranks", "2", "--mpirun-flag=--oversubscribe", "--mpirun-flag=--bind-to", "--mpirun-flag=none"});
  {
    Child c(cmd);
    ASSERT_TRUE(c.wait_for_output("look 2 of 4", 120s)) << c.output();
    c.signal(SIGTERM);
    EXPECT_EQ(c.wait(120s), kExitStopped) << c.output();
  }
  const auto resumed = test::run(cmd);
  ASSERT_EQ(resumed.code, kExitDone) << resumed.output;
  expect_same_study(t / "out", /*ranks_may_speculate=*/true);
}


// lrbench plan on a pilot (a fixed design): its open claim is planned as the first look of a
// design that goes on in waves of the pilot's size up to 60 seeds (--max and --step change
// it), with the seeds a fixed design would need and the cost from the measured run times.
TEST(SlowSequentialPlan, PlansAPilotsOpenClaimAsTheFirstLookOfADesignThatGoesOn) {
  TempDir t;
  std::string pilot = test::tiny_sweep();
  pilot.replace(pilot.find("seeds = 2"), 9, "seeds = 4");
  pilot += R"(
[[claim]]
name = "softmax-beats-linear"
statement = "softmax attention is more accurate than linear attention"
source = "a pilot"
kind = "better"
metric = "accuracy"
a = { model = "transformer", attention = "softmax" }
b = { model = "transformer", attention = "linear" }
)";
  test::write_text(t / "pilot.toml", pilot);
  const auto ran = test::run({test::lrbench(), "run", (t / "pilot.toml").string(), "--out", (t / "out").string()});
  ASSERT_EQ(ran.code, kExitDone) << ran.output;

  const auto text = test::run({test::lrbench(), "plan", (t / "out").string()});
  ASSERT_EQ(text.code, kExitDone) << text.output;
  EXPECT_NE(text.output.find("claims — what settling the open ones would cost"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("first 4, step 4, max 60 (assumed)"), std::string::npos) << text.output;

  const auto r = test::run({test::lrbench(), "plan", (t / "out").string(), "--max", "20", "--step", "2", "--format", "json", "-o", "-"});
  ASSERT_EQ(r.code, kExitDone) << r.output;
  const json claim = json::parse(r.output.substr(r.output.find('{'))).at("claims").at(0);
  ASSERT_EQ(claim.at("verdict"), "inconclusive") << "30 steps leave both models near chance: the claim stays open";
  const json& plan = claim.at("plan");
  EXPECT_EQ(plan.at("assumed_design"), true);
  EXPECT_EQ(plan.at("design"), (json{{"first", 4}, {"step", 2}, {"max", 20}}));
  EXPECT_EQ(plan.at("seeds_done"), 4);
  ASSERT_TRUE(plan.at("fixed_seeds_80").is_number()) << plan.dump();
  EXPECT_GT(plan.at("fixed_seeds_80").get<int>(), 4);
  ASSERT_TRUE(plan.at("sequential_expected_seeds").is_number()) << plan.dump();
  EXPECT_GE(plan.at("sequential_expected_seeds").get<double>(), 4.0);
  EXPECT_LE(plan.at("sequential_expected_seeds").get<double>(), 20.0);
  ASSERT_TRUE(plan.at("seconds_per_seed").is_number()) << plan.dump();
  EXPECT_GT(plan.at("seconds_per_seed").get<double>(), 0.0);
  EXPECT_EQ(plan.at("slots"), 1) << "one process ran the pilot";
  EXPECT_TRUE(plan.at("why_not").is_null()) << plan.dump();
}

}  // namespace
}  // namespace lrb
