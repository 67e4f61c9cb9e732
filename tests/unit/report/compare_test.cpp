// Compare: `lrbench compare` on crafted pairs of sides (suite/report/compare.h): identical,
// improved, regressed, unchanged within the margin, inconclusive, an exact count that moved,
// a run that failed, runs on one side only, different machines. CompareCommand: the command
// itself (formats, --fail-on's exit code, inputs it refuses).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>

#include <nlohmann/json.hpp>

#include "suite/config/run_spec.h"
#include "suite/core/errors.h"
#include "suite/core/exit_codes.h"
#include "suite/report/compare.h"
#include "tests/support/report_runs.h"
#include "tests/support/subprocess.h"

namespace lrb {
namespace {

using test::RunDraft;

// One side: model `model` on listops, seeds 0..n−1, accuracy base[seed] + shift + noise·N(0,1),
// step time 0.02·(1 + time_shift) with 1 % noise, exact counts as given.
struct Side {
  std::string model;
  int seeds = 6;
  double shift = 0, noise = 0, time_shift = 0;
  double params = 1000, peak = 4096;
  std::uint64_t noise_seed = 1;
  nlohmann::json provenance = nlohmann::json::object();
};

std::vector<RunRecord> side(const Side& s) {
  std::mt19937_64 rng(s.noise_seed);
  std::normal_distribution<double> z(0, 1);
  std::mt19937_64 base_rng(42);  // the same base values on both sides
  std::normal_distribution<double> base(0.7, 0.03);
  std::vector<RunRecord> out;
  for (int seed = 0; seed < s.seeds; ++seed) {
    RunDraft d;
    d.model = s.model;
    d.seed = seed;
    const double acc = base(base_rng) + s.shift + s.noise * z(rng);
    const double time = 0.02 * (1 + s.time_shift) * (1 + 0.01 * z(rng));
    d.metrics = {{"eval_accuracy", acc}, {"params", s.params}, {"peak_step_bytes", s.peak}, {"step_seconds_median", time}};
    d.provenance = s.provenance;
    out.push_back(test::make_run(d));
  }
  return out;
}

ReportInput input(std::vector<RunRecord> runs, const std::string& name) {
  ReportInput in;
  in.runs = std::move(runs);
  in.sources = {name};
  return in;
}

const FigureChange& change_of(const Comparison& c, const std::string& entrant, const std::string& figure) {
  for (const auto& f : c.changes)
    if (f.entrant == entrant && f.figure == figure) return f;
  throw std::runtime_error("no change of " + entrant + " " + figure);
}

std::vector<RunRecord> concat(std::vector<std::vector<RunRecord>> parts) {
  std::vector<RunRecord> out;
  for (auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// Five models, one per outcome, on the same two sides.
Comparison crafted(const CompareOptions& options = {}) {
  const auto before = concat({side({"transformer"}), side({"linear"}), side({"bigbird"}), side({"longformer"}),
                              side({"maelre", 3})});
  Side improved{"linear"};
  improved.shift = 0.05;
  improved.noise = 0.005;
  Side regressed{"bigbird"};
  regressed.shift = -0.05;
  regressed.noise = 0.005;
  regressed.time_shift = 0.3;  // 30 % slower
  Side unchanged{"longformer"};
  unchanged.noise = 0.0005;
  unchanged.params = 1200;  // an exact count that moved
  Side inconclusive{"maelre", 3};
  inconclusive.noise = 0.03;
  const auto after = concat({side({"transformer"}), side(improved), side(regressed), side(unchanged), side(inconclusive)});
  return compare_results(input(before, "before"), input(after, "after"), options);
}

TEST(Compare, EachOutcomeOnCraftedSides) {
  const Comparison c = crafted();
  EXPECT_EQ(c.paired, 27u);
  // Bit for bit on both sides: identical, every figure.
  for (const char* f : {"eval_accuracy", "params", "peak_step_bytes", "step_seconds_median"})
    EXPECT_EQ(change_of(c, "transformer", f).change, Change::Identical) << f;
  EXPECT_EQ(change_of(c, "linear", "eval_accuracy").change, Change::Improved) << change_of(c, "linear", "eval_accuracy").why;
  const FigureChange& worse = change_of(c, "bigbird", "eval_accuracy");
  EXPECT_EQ(worse.change, Change::Regressed) << worse.why;
  EXPECT_NEAR(*worse.estimate, -0.05, 0.01);
  ASSERT_TRUE(worse.interval);
  EXPECT_LT(worse.interval->hi, 0);
  // 30 % slower: a time figure, judged as a ratio (lower is better).
  const FigureChange& slower = change_of(c, "bigbird", "step_seconds_median");
  EXPECT_EQ(slower.kind, "time");
  EXPECT_EQ(slower.change, Change::Regressed) << slower.why;
  EXPECT_NEAR(*slower.estimate, 1.3, 0.03);
  // Within the default margin of a share (0.005): unchanged, by two one-sided tests.
  const FigureChange& same = change_of(c, "longformer", "eval_accuracy");
  EXPECT_EQ(same.change, Change::Unchanged) << same.why;
  ASSERT_TRUE(same.p_equivalence);
  EXPECT_LT(*same.p_equivalence, 0.05);
  const FigureChange& count = change_of(c, "longformer", "params");
  EXPECT_EQ(count.kind, "exact");
  EXPECT_EQ(count.change, Change::Changed) << count.why;
  EXPECT_EQ(count.after - count.before, 200);
  // Three seeds of noise 0.03 against a margin of 0.005: neither.
  EXPECT_EQ(change_of(c, "maelre", "eval_accuracy").change, Change::Inconclusive) << change_of(c, "maelre", "eval_accuracy").why;
  EXPECT_EQ(c.count(Change::Regressed), 2u);
  EXPECT_TRUE(c.provenance.empty());
  EXPECT_TRUE(c.warnings.empty()) << c.warnings.front();
}

TEST(Compare, AWiderMarginTurnsAChangeIntoUnchanged) {
  CompareOptions o;
  o.margins["eval_accuracy"] = parse_margin("accuracy=0.1").second;
  o.margins["step_seconds_median"] = parse_margin("step_seconds_median=50%").second;
  const Comparison c = crafted(o);
  EXPECT_EQ(change_of(c, "bigbird", "eval_accuracy").change, Change::Unchanged);
  EXPECT_EQ(change_of(c, "bigbird", "step_seconds_median").change, Change::Unchanged);
  EXPECT_NE(change_of(c, "bigbird", "eval_accuracy").why.find("smaller than the margin"), std::string::npos);
}

TEST(Compare, RunsOnOneSideAndRunsThatFailedAreListed) {
  auto before = side({"transformer", 4});
  auto after = side({"transformer", 3});  // seed 3 only before
  RunDraft failed;
  failed.model = "transformer";
  failed.seed = 2;
  failed.status = RunStatus::Failed;
  failed.error = "non-finite loss at step 7";
  after[2] = test::make_run(failed);
  RunDraft extra;
  extra.model = "transformer";
  extra.seed = 9;
  extra.metrics = {{"eval_accuracy", 0.5}};
  after.push_back(test::make_run(extra));  // only after
  const Comparison c = compare_results(input(before, "before"), input(after, "after"), {});
  EXPECT_EQ(c.paired, 3u);
  ASSERT_EQ(c.only_before.size(), 1u);
  EXPECT_NE(c.only_before[0].find("seed 3"), std::string::npos) << c.only_before[0];
  ASSERT_EQ(c.only_after.size(), 1u);
  EXPECT_NE(c.only_after[0].find("seed 9"), std::string::npos) << c.only_after[0];
  const FigureChange& status = change_of(c, "transformer", "status");
  EXPECT_EQ(status.change, Change::Regressed);
  EXPECT_NE(status.why.find("ok → failed (non-finite loss at step 7)"), std::string::npos) << status.why;
  // The two seeds still paired: too few to say the accuracy is unchanged, but bit for bit it is.
  EXPECT_EQ(change_of(c, "transformer", "eval_accuracy").pairs, 2u);
  EXPECT_EQ(change_of(c, "transformer", "eval_accuracy").change, Change::Identical);
  ASSERT_FALSE(c.warnings.empty());
  EXPECT_NE(c.warnings[0].find("1 run(s) only in before, 1 only in after"), std::string::npos) << c.warnings[0];
}

TEST(Compare, DifferentMachinesAreNamedAndTimeFiguresWarned) {
  Side b{"transformer"}, a{"transformer"};
  b.provenance = {{"cpu", {{"model_name", "AMD EPYC"}, {"family", 25}, {"model", 17}}}, {"blas_core", "Haswell"}};
  a.provenance = {{"cpu", {{"model_name", "AMD EPYC"}, {"family", 26}, {"model", 2}}}, {"blas_core", "Cooperlake"}};
  a.noise_seed = 2;  // other timings
  const Comparison c = compare_results(input(side(b), "before"), input(side(a), "after"), {});
  std::set<std::string> differs;
  for (const auto& d : c.provenance) differs.insert(d.what);
  EXPECT_EQ(differs, (std::set<std::string>{"blas_core", "cpu"}));
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_NE(c.warnings[0].find("different machines"), std::string::npos) << c.warnings[0];
}

TEST(Compare, SidesThatShareNoRunAreRefused) {
  Side other{"transformer"};
  auto after = side(other);
  for (auto& r : after) {
    r.spec["base_seed"] = 2;
    r.key = run_key_of(r.spec);
  }
  EXPECT_THROW(compare_results(input(side({"transformer"}), "before"), input(after, "after"), {}), UserError);
}

TEST(Compare, MarginsAreValidated) {
  EXPECT_EQ(parse_margin("accuracy=0.01").first, "eval_accuracy");
  EXPECT_FALSE(parse_margin("accuracy=0.01").second.relative);
  EXPECT_DOUBLE_EQ(parse_margin("peak_step_bytes=2%").second.value, 0.02);
  for (const char* bad : {"accuracy", "=0.1", "accuracy=", "accuracy=-1", "accuracy=nan", "accuracy=0.1x", "nonsense=0.1",
                          "step_seconds_median=0.001"})
    EXPECT_THROW(parse_margin(bad), UserError) << bad;
}

// The command: a folder of each side written run by run; exit 5 only with --fail-on regressed.
TEST(CompareCommand, FailsOnARegressionOnlyWhenAskedAndWritesEveryFormat) {
  test::TempDir t;
  Side regressed{"bigbird"};
  regressed.shift = -0.05;
  regressed.noise = 0.005;
  test::write_runs(t / "before", side({"bigbird"}));
  test::write_runs(t / "after", side(regressed));
  test::write_runs(t / "same", side({"bigbird"}));
  const std::string before = (t / "before").string(), after = (t / "after").string();
  auto plain = test::run({test::lrbench(), "compare", before, after});
  EXPECT_EQ(plain.code, kExitDone) << plain.output;
  EXPECT_NE(plain.output.find("regressed"), std::string::npos) << plain.output;
  auto failing = test::run({test::lrbench(), "compare", before, after, "--fail-on", "regressed"});
  EXPECT_EQ(failing.code, kExitRegressed) << failing.output;
  auto same = test::run({test::lrbench(), "compare", before, (t / "same").string(), "--fail-on", "regressed"});
  EXPECT_EQ(same.code, kExitDone) << same.output;
  for (const char* format : {"md", "json", "csv", "html", "tex"}) {
    const auto out = t / (std::string("c.") + format);
    auto r = test::run({test::lrbench(), "compare", before, after, "-o", out.string()});
    ASSERT_EQ(r.code, kExitDone) << format << "\n" << r.output;
    const std::string text = test::read_text(out);
    EXPECT_NE(text.find("regressed"), std::string::npos) << format;
  }
  const auto json = nlohmann::json::parse(test::read_text(t / "c.json"));
  EXPECT_EQ(json.at("kind"), "compare");
  EXPECT_EQ(json.at("summary").at("regressed"), 1);
  EXPECT_EQ(json.at("paired_runs"), 6);
}

TEST(CompareCommand, RefusesWhatItCannotCompare) {
  test::TempDir t;
  test::write_runs(t / "a", side({"bigbird"}));
  Side other{"bigbird"};
  auto runs = side(other);
  for (auto& r : runs) {
    r.spec["base_seed"] = 7;
    r.key = run_key_of(r.spec);
  }
  test::write_runs(t / "b", runs);
  const auto no_key = test::run({test::lrbench(), "compare", (t / "a").string(), (t / "b").string()});
  EXPECT_EQ(no_key.code, kExitUsage) << no_key.output;
  EXPECT_NE(no_key.output.find("share no run"), std::string::npos) << no_key.output;
  const auto missing = test::run({test::lrbench(), "compare", (t / "a").string(), (t / "nothing").string()});
  EXPECT_EQ(missing.code, kExitUsage) << missing.output;
  const auto margin = test::run({test::lrbench(), "compare", (t / "a").string(), (t / "a").string(), "--margin", "bogus=1"});
  EXPECT_EQ(margin.code, kExitUsage) << margin.output;
  EXPECT_NE(margin.output.find("no figure 'bogus'"), std::string::npos) << margin.output;
  // -o never lands on a side's own files.
  const auto over = test::run({test::lrbench(), "compare", (t / "a").string(), (t / "a").string(), "-o",
                               (t / "a" / "sweep.json").string()});
  EXPECT_EQ(over.code, kExitUsage) << over.output;
}

}  // namespace
}  // namespace lrb
