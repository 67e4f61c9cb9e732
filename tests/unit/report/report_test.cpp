// Report*: the report layer over a results folder written run by run (no training):
// a failed run, a stopped run, a seed missing on one side, an n = 1 cell, mixed thread
// counts, and a sequence-length sweep for scaling fits (tests/support/report_runs.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "suite/core/errors.h"
#include "suite/core/exit_codes.h"
#include "suite/core/files.h"
#include "suite/report/analysis.h"
#include "suite/report/claims/claims.h"
#include "suite/report/escape.h"
#include "suite/report/report_builder.h"
#include "suite/report/report_input.h"
#include "suite/report/report_tables.h"
#include "suite/report/sinks.h"
#include "suite/stats/multiple_testing.h"
#include "suite/store/results_folder.h"
#include "suite/store/results_layout.h"
#include "suite/store/run_file.h"
#include "tests/support/report_runs.h"
#include "tests/support/subprocess.h"

namespace lrb {
namespace {

using json = nlohmann::json;

// One fixture folder for the whole file: writing it takes a moment, reading it is cheap.
class ReportTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    test::write_report_fixture(dir_->path());
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static const std::filesystem::path& dir() { return dir_->path(); }
  static ReportInput input() { return load_report_input({dir()}); }
  static ReportOptions fast(const std::string& baseline = "") {
    ReportOptions o;
    o.baseline = baseline;
    o.bootstrap.resamples = 2000;
    return o;
  }
  static std::string render(const Report& r, const std::string& format) {
    std::ostringstream ss;
    make_report_sink(format)->write(r, ss);
    return ss.str();
  }

 private:
  static test::TempDir* dir_;
};
test::TempDir* ReportTest::dir_ = nullptr;

const CellResult& cell(const Analysis& a, const std::string& task, const std::string& entrant, std::int64_t seq_len = 0) {
  for (const auto& c : a.cells)
    if (c.cell.task == task && c.cell.entrant == entrant && (seq_len == 0 || c.cell.seq_len == seq_len)) return c;
  throw std::runtime_error("no cell " + task + " " + entrant);
}

const ComparisonResult& comparison(const Analysis& a, const std::string& model, const std::string& baseline,
                                   const std::string& task = "listops") {
  for (const auto& c : a.comparisons)
    if (a.cells[c.a].cell.entrant == model && a.cells[c.b].cell.entrant == baseline && a.cells[c.a].cell.task == task) return c;
  throw std::runtime_error("no comparison " + model + " vs " + baseline);
}

bool contains(const std::string& haystack, const std::string& needle) { return haystack.find(needle) != std::string::npos; }

// Tests that run the lrbench program are in suites named *Command: the sanitized torch-free
// build (scripts/sanitize.sh fast) has no program and leaves them out by that name.
class ReportCommand : public ReportTest {};

TEST_F(ReportTest, CellsCountFailedStoppedAndSmallN) {
  const Analysis a = analyse(input(), fast());
  ASSERT_EQ(a.cells.size(), 3u + 8u);
  const auto& t = cell(a, "listops", "transformer");
  EXPECT_EQ(t.summary.n, 3u);
  EXPECT_NEAR(*t.summary.mean, 0.62, 1e-12);
  ASSERT_TRUE(t.summary.t_ci);
  ASSERT_TRUE(t.summary.bootstrap.bca);
  EXPECT_EQ(t.summary.bootstrap.resamples, 2000u);

  const auto& l = cell(a, "listops", "linear");
  EXPECT_EQ(l.summary.n, 2u);
  EXPECT_EQ(l.cell.failed, 1);
  ASSERT_EQ(l.cell.problems.size(), 1u);
  EXPECT_EQ(l.cell.problems[0].seed, 2);
  EXPECT_EQ(l.cell.problems[0].reason, "non-finite loss at step 3");

  const auto& b = cell(a, "listops", "bigbird");
  EXPECT_EQ(b.summary.n, 1u);
  EXPECT_EQ(b.cell.stopped, 1);
  EXPECT_FALSE(b.summary.std);
  EXPECT_FALSE(b.summary.t_ci);
  EXPECT_FALSE(b.summary.bootstrap.bca);

  // The text task's cells differ by seq_len only: the condition, not the entrant.
  const auto& tt = cell(a, "text", "transformer", 256);
  EXPECT_EQ(tt.cell.condition, json({{"seq_len", 256}}));
  EXPECT_EQ(tt.cell.setting_label(), "seq_len=256");
  EXPECT_EQ(tt.efficiency.count("peak_bytes"), 1u);
}

TEST_F(ReportTest, PairsBySeedAndReportsUnpairedSeeds) {
  const Analysis a = analyse(input(), fast("transformer"));
  const auto& lt = comparison(a, "linear", "transformer");
  EXPECT_EQ(lt.paired.n_pairs, 2u);
  EXPECT_EQ(lt.paired.seeds, (std::vector<std::int64_t>{0, 1}));
  EXPECT_TRUE(lt.paired.only_a.empty());
  EXPECT_EQ(lt.paired.only_b, (std::vector<std::int64_t>{2}));  // linear failed on seed 2: not used
  EXPECT_NEAR(*lt.paired.mean_diff, 0.095, 1e-12);
  const auto& bt = comparison(a, "bigbird", "transformer");
  EXPECT_EQ(bt.paired.n_pairs, 1u);
  EXPECT_FALSE(bt.paired.t.p_value);
  EXPECT_EQ(bt.paired.only_b, (std::vector<std::int64_t>{1, 2}));

  // Holm and BH over the task's family: the defined paired-t p-values.
  std::vector<std::optional<double>> p;
  for (std::size_t k : a.tasks[0].comparisons) p.push_back(a.comparisons[k].paired.t.p_value);
  const auto holm = stats::adjust(p, stats::Correction::kHolm);
  const auto bh = stats::adjust(p, stats::Correction::kBenjaminiHochberg);
  for (std::size_t i = 0; i < p.size(); ++i) {
    const auto& c = a.comparisons[a.tasks[0].comparisons[i]];
    EXPECT_EQ(c.p_holm, holm[i]);
    EXPECT_EQ(c.p_bh, bh[i]);
    EXPECT_EQ(c.p_shown, c.p_holm);
  }
}

TEST_F(ReportTest, AllPairsAndTieGroups) {
  const Analysis a = analyse(input(), fast());
  // Rank order linear > transformer > bigbird; every pair once, the better first.
  EXPECT_EQ(a.tasks[0].comparisons.size(), 3u);
  const auto& lb = comparison(a, "linear", "bigbird");
  EXPECT_EQ(lb.paired.n_pairs, 1u);
  EXPECT_EQ(lb.paired.only_a, (std::vector<std::int64_t>{1}));
  const auto& l = cell(a, "listops", "linear");
  const auto& t = cell(a, "listops", "transformer");
  const auto& b = cell(a, "listops", "bigbird");
  ASSERT_TRUE(l.rank && t.rank && b.rank);
  EXPECT_EQ(l.rank->group_rank, 1u);
  // linear - transformer over seeds 0, 1: (0.10, 0.09), t = 19 on 1 df, p ≈ 0.033: a separate group.
  EXPECT_EQ(t.rank->group_rank, 2u);
  // bigbird shares one seed with transformer: untestable, so it joins transformer's group.
  EXPECT_EQ(b.rank->group_rank, 2u);
}

TEST_F(ReportTest, BaselineMustNameAModel) {
  try {
    analyse(input(), fast("transfomer"));
    FAIL() << "expected UserError";
  } catch (const UserError& e) {
    EXPECT_TRUE(contains(e.what(), "did you mean 'transformer'")) << e.what();
  }
}

TEST_F(ReportTest, AMetricNoRunRecordsIsAnErrorNamingThoseThatAre) {
  ReportOptions o = fast();
  o.metric = "acuracy";
  try {
    analyse(input(), o);
    FAIL() << "an empty report, exit 0, for a typo";
  } catch (const UserError& e) {
    EXPECT_TRUE(contains(e.what(), "did you mean 'accuracy'")) << e.what();
    EXPECT_TRUE(contains(e.what(), "they record: ")) << e.what();
  }
  o.metric = "accuracy";  // a task metric by its short name
  EXPECT_FALSE(analyse(input(), o).cells.empty());
  o.metric = "peak_bytes";  // a figure by its stored name
  EXPECT_FALSE(analyse(input(), o).cells.empty());
}

TEST_F(ReportTest, ScalingFitsFindTheExponents) {
  const Analysis a = analyse(input(), fast());
  ASSERT_EQ(a.scaling.size(), 4u);  // {transformer, linear} x {peak_bytes, step_seconds_median}
  for (const auto& s : a.scaling) {
    EXPECT_EQ(s.task, "text");
    EXPECT_EQ(s.lengths, 4u);
    EXPECT_EQ(s.points.size(), 8u);
    const double expected = s.model == "transformer" ? 2.0 : 1.0;
    EXPECT_NEAR(s.fit.slope, expected, 0.02) << s.entrant << " " << s.metric;
    ASSERT_TRUE(s.fit.slope_ci);
    EXPECT_LE(s.fit.slope_ci->lo, expected);
    EXPECT_GE(s.fit.slope_ci->hi, expected);
  }
}

TEST_F(ReportTest, TerminalTablesShowFailuresMissingSeedsAndSmallN) {
  const std::string out = render(build_report(input(), fast("transformer")), "term");
  for (const char* needle : {"listops — accuracy (higher is better), over seeds", "failed", "stopped", "n=1",
                             "seed 2 failed: non-finite loss at step 3", "seed 1 stopped: stopped by SIGTERM at step 12",
                             "only transformer: 2", "only transformer: 1 2", "p (Holm)", "transformer (baseline)",
                             "mixes thread counts (1, 2)", "cell(s) with n = 1 (bigbird)", "scaling with N", "quadratic",
                             "linear", "efficiency (median over ok runs)", "peak memory", "95% CI (BCa)", "IQM", "‡"})
    EXPECT_TRUE(contains(out, needle)) << "missing '" << needle << "' in\n" << out;
}

TEST_F(ReportTest, CorrectionChoiceIsStated) {
  ReportOptions o = fast("transformer");
  o.correction = stats::Correction::kBenjaminiHochberg;
  const std::string out = render(build_report(input(), o), "md");
  EXPECT_TRUE(contains(out, "p (Benjamini–Hochberg)")) << out;
  EXPECT_TRUE(contains(out, "false discovery rate")) << out;
  EXPECT_FALSE(contains(out, "p (Holm)")) << out;
}

TEST_F(ReportTest, JsonHasTheStatsKeys) {
  const Report r = build_report(input(), fast("transformer"));
  const json j = json::parse(render(r, "json"));
  EXPECT_EQ(j.at("schema_version"), 1);
  EXPECT_EQ(j.at("metric"), "accuracy");
  ASSERT_FALSE(j.at("cells").empty());
  for (const auto& c : j.at("cells"))
    for (const char* k : {"task", "model", "setting", "n", "failed", "stopped", "mean", "std", "sem", "ci95", "bootstrap_bca95",
                          "median", "iqm", "values"})
      EXPECT_TRUE(c.contains(k)) << k;
  ASSERT_FALSE(j.at("comparisons").empty());
  for (const auto& c : j.at("comparisons"))
    for (const char* k : {"task", "model", "baseline", "setting", "n_pairs", "mean_diff", "ci95", "p_ttest", "p_wilcoxon", "p_holm",
                          "p_bh", "effect_size", "prob_improvement"})
      EXPECT_TRUE(c.contains(k)) << k;
  // n = 1: no interval, null rather than a number.
  for (const auto& c : j.at("cells"))
    if (c.at("model") == "bigbird") {
      EXPECT_EQ(c.at("n"), 1);
      EXPECT_EQ(c.at("stopped"), 1);
      EXPECT_TRUE(c.at("ci95").is_null());
      EXPECT_TRUE(c.at("std").is_null());
      ASSERT_EQ(c.at("values").size(), 1u);
      EXPECT_EQ(c.at("values")[0].at("seed"), 0);
      EXPECT_EQ(c.at("values")[0].at("run").get<std::string>().size(), 64u);
    }
  EXPECT_EQ(j.at("options").at("bootstrap").at("resamples"), 2000);
  EXPECT_EQ(j.at("scaling").size(), 4u);
}

TEST_F(ReportTest, CsvHasOneRowPerCellComparisonAndProblem) {
  const Report r = build_report(input(), fast("transformer"));
  const std::string csv = render(r, "csv");
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line.rfind("kind,task,model,entrant,baseline,setting,metric,n,failed,stopped", 0), 0u) << line;
  std::map<std::string, int> kinds;
  while (std::getline(in, line)) ++kinds[line.substr(0, line.find(','))];
  EXPECT_EQ(kinds["cell"], 11);
  EXPECT_EQ(kinds["comparison"], 2 + 4);  // listops: linear, bigbird vs transformer; text: linear vs transformer x 4
  EXPECT_EQ(kinds["run_problem"], 2);
  EXPECT_EQ(kinds["scaling"], 4);
  EXPECT_TRUE(contains(csv, "non-finite loss at step 3"));
}

TEST_F(ReportTest, LatexIsBooktabsWithMarks) {
  const std::string tex = render(build_report(input(), fast("transformer")), "tex");
  for (const char* needle : {"\\toprule", "\\midrule", "\\bottomrule", "$\\pm$", "\\textbf{", "\\textsuperscript{\\ddag}",
                             "\\caption{listops --- accuracy (higher is better), over seeds}"})
    EXPECT_TRUE(contains(tex, needle)) << needle;
  EXPECT_FALSE(contains(tex, "±"));
}

TEST_F(ReportTest, LeaderboardRanksAcrossTasksAndShowsFailures) {
  const Report r = build_leaderboard(input(), fast());
  const std::string out = render(r, "term");
  EXPECT_TRUE(contains(out, "listops — accuracy (higher is better): tie groups")) << out;
  EXPECT_TRUE(contains(out, "text seq_len=128")) << out;
  EXPECT_TRUE(contains(out, "seed 2 failed: non-finite loss at step 3")) << out;
  // bigbird ran only on listops: left out of the ranking across tasks, and said so.
  EXPECT_TRUE(contains(out, "left out (not on every task): bigbird")) << out;
  EXPECT_TRUE(contains(out, "across tasks — mean rank and normalised score")) << out;
  const auto& overall = r.data().at("overall").at("models");
  ASSERT_EQ(overall.size(), 2u);
  // linear wins listops, transformer text at 128, 256 and 512, and 1024 is a tie: mean ranks 1.3 and 1.7.
  EXPECT_EQ(overall[0].at("model"), "transformer");
  EXPECT_DOUBLE_EQ(overall[0].at("mean_rank").get<double>(), 1.3);
  EXPECT_DOUBLE_EQ(overall[1].at("mean_rank").get<double>(), 1.7);
  ASSERT_TRUE(overall[0].at("mean_rank_ci").is_array());
}

TEST(ReportEscape, EveryLanguage) {
  EXPECT_EQ(html_escape("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
  EXPECT_EQ(latex_escape("50%_{x}^$#&~\\"), "50\\%\\_\\{x\\}\\textasciicircum{}\\$\\#\\&\\textasciitilde{}\\textbackslash{}");
  EXPECT_EQ(latex_escape("0.5 ± 0.1"), "0.5 $\\pm$ 0.1");
  EXPECT_EQ(csv_field("a,b\"c"), "\"a,b\"\"c\"");
  EXPECT_EQ(csv_field("plain"), "plain");
  EXPECT_EQ(markdown_escape("a|b*c"), "a\\|b\\*c");
  EXPECT_EQ(gnuplot_label("x'`rm -rf`\"@$;#\\ é_^{}"), "x??rm -rf??????? ?_^{}");
}

TEST(ReportEscape, HostileNamesStayText) {
  test::TempDir t;
  for (int s = 0; s < 2; ++s)
    for (const char* tag : {"<script>alert(1)</script>", "50%_{x} & \"q\", `x`"}) {
      test::RunDraft d;
      d.model = "evil<img src=x onerror=alert(1)>";
      d.model_options = {{"tag", tag}};
      d.seed = s;
      d.metrics = {{"eval_accuracy", 0.5 + 0.1 * s}};
      test::write_run(t.path(), d);
    }
  ReportOptions o;
  o.bootstrap.resamples = 500;
  const Report r = build_report(load_report_input({t.path()}), o);
  std::ostringstream md, tex, csv;
  make_report_sink("md")->write(r, md);
  make_report_sink("tex")->write(r, tex);
  make_report_sink("csv")->write(r, csv);
  EXPECT_FALSE(contains(md.str(), "<img")) << md.str();
  EXPECT_FALSE(contains(tex.str(), "50%_")) << tex.str();
  EXPECT_TRUE(contains(tex.str(), "50\\%\\_\\{x\\}")) << tex.str();
  EXPECT_TRUE(contains(csv.str(), "\"evil<img src=x onerror=alert(1)> tag=50%_{x} & \"\"q\"\", `x`\"")) << csv.str();
}

// A report's warnings on the folder, one a line.
std::string report_warnings(const std::filesystem::path& folder) {
  ReportOptions o;
  o.bootstrap.resamples = 500;
  const Report r = build_report(load_report_input({folder}), o);
  std::string all;
  for (const auto& w : r.warnings) all += w + "\n";
  return all;
}

// Issue 66 item 24: the same run key in two folders was "counted once" in silence, one line
// per run, though the runs gave different accuracies under two BLAS cores. One note per
// folder says how many, which figures differ, an example and the provenance that differs.
TEST(ReportWarnings, TheSameRunsInTwoFoldersAreOneNoteNamingWhatDiffers) {
  test::TempDir first, second, third;
  for (int s = 0; s < 3; ++s) {
    test::RunDraft d;
    d.seed = s;
    d.metrics = {{"eval_accuracy", 0.8 + 0.01 * s}, {"params", 1000}};
    d.provenance = {{"blas_core", "Haswell"}};
    test::write_run(first.path(), d);
    test::write_run(third.path(), d);  // the same results under the same core
    if (s == 1) d.metrics["eval_accuracy"] += 3e-4;
    d.provenance = {{"blas_core", "Zen"}};
    test::write_run(second.path(), d);
  }
  const ReportInput in = load_report_input({first.path(), second.path(), third.path()});
  EXPECT_EQ(in.runs.size(), 3u);
  std::vector<std::string> notes;
  for (const auto& n : in.notes)
    if (contains(n, "are also in")) notes.push_back(n);
  ASSERT_EQ(notes.size(), 2u) << "one note per folder, not one per run";
  const std::string& differ = notes[0];
  EXPECT_TRUE(contains(differ, "3 run(s) of " + second.path().string() + " are also in " + first.path().string())) << differ;
  EXPECT_TRUE(contains(differ, "1 of them gave different results (eval_accuracy in 1;")) << differ;
  EXPECT_TRUE(contains(differ, "eval_accuracy 0.81 in " + first.path().string())) << differ;
  EXPECT_TRUE(contains(differ, "Their provenance differs in blas_core")) << differ;
  EXPECT_TRUE(contains(differ, "give the folder whose results to keep first")) << differ;
  EXPECT_TRUE(contains(notes[1], "their figures are the same")) << notes[1];
  // The folder given first is kept.
  for (const auto& r : in.runs) EXPECT_EQ(r.provenance.at("blas_core"), "Haswell");
}

TEST(ReportWarnings, MixedRevisionsAndDevicesAreNamed) {
  test::TempDir t;
  for (int s = 0; s < 2; ++s)
    for (const char* model : {"transformer", "linear"}) {
      test::RunDraft d;
      d.model = model;
      d.seed = s;
      d.revision = s == 0 ? "aaa1111" : "bbb2222";
      d.metrics = {{"eval_accuracy", 0.5 + 0.1 * s}};
      RunRecord r = test::make_run(d);
      if (std::string(model) == "linear") r.provenance["gpu"] = {{"name", "NVIDIA H200"}, {"index", 0}};  // as set_up_gpu writes it
      std::filesystem::create_directories(t / "runs");
      write_run_file(ResultsLayout(t.path()).run_file(r.key), r);
    }
  const std::string all = report_warnings(t.path());
  EXPECT_TRUE(contains(all, "listops: the table mixes runs from different code revisions (aaa1111, bbb2222)")) << all;
  EXPECT_TRUE(contains(all, "listops: the table mixes devices (cpu, cpu (NVIDIA H200))")) << all;
  EXPECT_FALSE(contains(all, "thread counts")) << all;
}

// Two processors are two devices: CPUs differ by 2x and more in a step's time, and a name
// alone ("AMD EPYC") does not tell their core designs apart.
TEST(ReportWarnings, RunsOnTwoProcessorsAreTwoDevices) {
  for (const bool same : {true, false}) {
    test::TempDir t;
    for (int s = 0; s < 2; ++s) {
      test::RunDraft d;
      d.seed = s;
      d.metrics = {{"eval_accuracy", 0.5 + 0.1 * s}};
      RunRecord r = test::make_run(d);
      r.provenance["cpu"] = {{"model_name", "AMD EPYC"}, {"family", 25}, {"model", same || s == 0 ? 1 : 17}};
      std::filesystem::create_directories(t / "runs");
      write_run_file(ResultsLayout(t.path()).run_file(r.key), r);
    }
    const std::string all = report_warnings(t.path());
    if (same)
      EXPECT_FALSE(contains(all, "mixes devices")) << all;
    else
      EXPECT_TRUE(contains(all, "listops: the table mixes devices (cpu (AMD EPYC, family 25 model 1), cpu (AMD EPYC, "
                                "family 25 model 17))"))
          << all;
  }
}

// A folder switched to ranks_per_run = 2 holds 1-rank and 2-rank runs of every setting: two
// experiments, so two cells each, never one cell taking "the first" run per seed. A claim's
// side without ranks_per_run reads the single-rank runs only, whatever their order.
TEST(ReportCells, RunsOfAnotherRankCountAreAnotherCell) {
  for (const bool two_ranks_first : {false, true}) {
    test::TempDir t;
    std::vector<RunRecord> runs;
    for (const int ranks : two_ranks_first ? std::vector<int>{2, 1} : std::vector<int>{1, 2})
      for (int s = 0; s < 3; ++s)
        for (const char* model : {"transformer", "linear"}) {
          test::RunDraft d;
          d.model = model;
          d.seed = s;
          d.ranks_per_run = ranks;
          // The 2-rank runs of transformer are far better: a mixed cell would show it.
          const double edge = std::string(model) == "transformer" && ranks == 2 ? 0.3 : 0.0;
          d.metrics = {{"eval_accuracy", 0.5 + edge + 0.01 * s}};
          runs.push_back(test::write_run(t.path(), d));
        }
    ReportOptions o;
    o.bootstrap.resamples = 500;
    const Analysis a = analyse(load_report_input({t.path()}), o);
    ASSERT_EQ(a.cells.size(), 4u) << "two models by two rank counts";
    for (const auto& c : a.cells) {
      ASSERT_EQ(c.cell.values.size(), 3u) << c.cell.entrant << " " << c.cell.condition_label;
      EXPECT_TRUE(c.cell.duplicates.empty()) << c.cell.entrant;
      const double mean = (c.cell.values[0].value + c.cell.values[1].value + c.cell.values[2].value) / 3;
      const bool boosted = c.cell.model == "transformer" && c.cell.condition.at("ranks_per_run") == 2;
      EXPECT_NEAR(mean, boosted ? 0.81 : 0.51, 1e-9) << c.cell.entrant << " " << c.cell.condition_label;
    }
    ClaimSpec claim;
    claim.name = "transformer-beats-linear";
    claim.kind = ClaimKind::Better;
    claim.metric = "eval_accuracy";
    claim.a.match = {{"model.name", "transformer"}};
    claim.b.match = {{"model.name", "linear"}};
    const auto judged = evaluate_claims({claim}, runs, ClaimSettings{});
    EXPECT_EQ(judged.at(0).n, 3u);
    EXPECT_NEAR(*judged.at(0).estimate, 0.0, 1e-12) << "a side without ranks_per_run reads the 1-rank runs only";
    claim.a.match.emplace_back("ranks_per_run", 2);
    claim.b.match.emplace_back("ranks_per_run", 2);
    EXPECT_NEAR(*evaluate_claims({claim}, runs, ClaimSettings{}).at(0).estimate, 0.3, 1e-12);
  }
}

// A results folder that is a symbolic link loop is the user's path to fix: exit 2 naming it,
// never an internal error.
TEST_F(ReportCommand, ASymbolicLinkLoopIsAUserError) {
  test::TempDir t;
  std::filesystem::create_symlink(t / "b", t / "a");
  std::filesystem::create_symlink(t / "a", t / "b");
  for (const char* command : {"status", "report", "index", "merge", "plan"}) {
    auto r = test::run({test::lrbench(), command, (t / "a").string()});
    EXPECT_EQ(r.code, kExitUsage) << command << ": " << r.output;
    EXPECT_FALSE(contains(r.output, "internal error")) << command << ": " << r.output;
  }
}

// A model that failed on every seed, and a task where every run failed: rows that say so,
// comparisons without pairs, and no plot drawn from nothing.
TEST(ReportFailures, CellsWithoutAnyValueStayVisible) {
  test::TempDir t;
  for (int s = 0; s < 2; ++s) {
    test::RunDraft ok;
    ok.seed = s;
    ok.metrics = {{"eval_accuracy", 0.6 + 0.01 * s}};
    test::write_run(t.path(), ok);
    test::RunDraft bad = ok;
    bad.model = "linear";
    bad.status = RunStatus::Failed;
    bad.error = "memory budget exceeded";
    bad.metrics = {};
    test::write_run(t.path(), bad);
    bad.task = "image";
    test::write_run(t.path(), bad);
  }
  ReportOptions o;
  o.bootstrap.resamples = 500;
  const Report r = build_report(load_report_input({t.path()}), o);
  std::ostringstream term, html;
  make_report_sink("term")->write(r, term);
  EXPECT_TRUE(contains(term.str(), "no result")) << term.str();
  EXPECT_TRUE(contains(term.str(), "no pairs")) << term.str();
  EXPECT_TRUE(contains(term.str(), "linear, seed 1 failed: memory budget exceeded")) << term.str();
  EXPECT_TRUE(contains(term.str(), "image — accuracy")) << term.str();
  make_report_sink("html")->write(r, html);
  EXPECT_TRUE(contains(html.str(), "data-kind=\"seeds\"")) << "listops has values";
  const Report lb = build_leaderboard(load_report_input({t.path()}), o);
  std::string warnings;
  for (const auto& w : lb.warnings) warnings += w + "\n";
  EXPECT_TRUE(contains(warnings, "no ranking across tasks")) << warnings;
}

// The command line: `report DIR` with no flags still prints the per-task table; formats by
// flag or by -o's extension; a leaderboard over two folders counts a shared run once.
TEST_F(ReportCommand, CommandLine) {
  auto plain = test::run({test::lrbench(), "report", dir().string(), "--resamples", "500"}, std::chrono::seconds(120));
  ASSERT_EQ(plain.code, kExitDone) << plain.output;
  EXPECT_TRUE(contains(plain.output, "listops — accuracy (higher is better), over seeds")) << plain.output;
  EXPECT_TRUE(contains(plain.output, "95% CI (t)")) << plain.output;

  test::TempDir out;
  auto js = test::run({test::lrbench(), "report", dir().string(), "--baseline", "transformer", "--resamples", "500", "-o",
                       (out / "r.json").string()}, std::chrono::seconds(120));
  ASSERT_EQ(js.code, kExitDone) << js.output;
  const json j = json::parse(read_file(out / "r.json"));
  EXPECT_EQ(j.at("options").at("baseline"), "transformer");

  // Without gnuplot the HTML report says what to install, and nothing is written.
  auto no_gnuplot = test::run({test::lrbench(), "report", dir().string(), "--resamples", "500", "-o", (out / "r.html").string()},
                              std::chrono::seconds(120), {"PATH=/nonexistent"});
  EXPECT_EQ(no_gnuplot.code, kExitUsage) << no_gnuplot.output;
  EXPECT_TRUE(contains(no_gnuplot.output, "gnuplot is not installed")) << no_gnuplot.output;
  EXPECT_FALSE(std::filesystem::exists(out / "r.html"));

  // The file's name and format agree: text is never written to "x.pdf", nor JSON to "x.md".
  auto pdf = test::run({test::lrbench(), "report", dir().string(), "--resamples", "500", "-o", (out / "x.pdf").string()},
                       std::chrono::seconds(120));
  EXPECT_EQ(pdf.code, kExitUsage) << pdf.output;
  EXPECT_TRUE(contains(pdf.output, "no report format is written to a '.pdf' file")) << pdf.output;
  auto mismatch = test::run({test::lrbench(), "report", dir().string(), "--resamples", "500", "--format", "json", "-o",
                             (out / "x.md").string()}, std::chrono::seconds(120));
  EXPECT_EQ(mismatch.code, kExitUsage) << mismatch.output;
  EXPECT_TRUE(contains(mismatch.output, "names a md file, but --format is json")) << mismatch.output;
  EXPECT_FALSE(std::filesystem::exists(out / "x.pdf"));
  EXPECT_FALSE(std::filesystem::exists(out / "x.md"));
  auto txt = test::run({test::lrbench(), "report", dir().string(), "--resamples", "500", "-o", (out / "r.txt").string()},
                       std::chrono::seconds(120));
  EXPECT_EQ(txt.code, kExitDone) << txt.output;
  EXPECT_TRUE(contains(read_file(out / "r.txt"), "listops — accuracy (higher is better), over seeds"));

  auto bad = test::run({test::lrbench(), "report", dir().string(), "--baseline", "nope"}, std::chrono::seconds(120));
  EXPECT_EQ(bad.code, kExitUsage) << bad.output;
  EXPECT_TRUE(contains(bad.output, "--baseline 'nope' is not a model of these results")) << bad.output;

  // A second folder: a copy of one run of the first (counted once) and a fourth transformer seed.
  test::TempDir second;
  test::RunDraft d;
  d.model_options = {{"dim", 16}};
  d.metrics = {{"eval_accuracy", 0.60}, {"eval_loss", 0.40}};
  const RunRecord copy = test::make_run(d);
  std::filesystem::create_directories(second / "runs");
  std::filesystem::copy_file(dir() / "runs" / (copy.key + ".h5"), second / "runs" / (copy.key + ".h5"));
  d.seed = 3;
  d.metrics = {{"eval_accuracy", 0.63}};
  test::write_run(second.path(), d);
  auto lb = test::run({test::lrbench(), "leaderboard", dir().string(), second.path().string(), "--resamples", "500",
                       "-o", (out / "lb.json").string()}, std::chrono::seconds(120));
  ASSERT_EQ(lb.code, kExitDone) << lb.output;
  const json l = json::parse(read_file(out / "lb.json"));
  EXPECT_EQ(l.at("kind"), "leaderboard");
  EXPECT_EQ(l.at("sources").size(), 2u);
  for (const auto& c : l.at("cells"))
    if (c.at("task") == "listops" && c.at("model") == "transformer") {
      EXPECT_EQ(c.at("n"), 4);
    }
  EXPECT_TRUE(contains(l.at("warnings").dump(), "1 run(s) of " + second.path().string() + " are also in " + dir().string()))
      << l.at("warnings").dump();
  EXPECT_TRUE(contains(l.at("warnings").dump(), "their figures are the same")) << l.at("warnings").dump();
  auto md = test::run({test::lrbench(), "leaderboard", dir().string(), "--resamples", "500", "--format", "md"},
                      std::chrono::seconds(120));
  ASSERT_EQ(md.code, kExitDone) << md.output;
  EXPECT_TRUE(contains(md.output, "## listops — accuracy (higher is better): tie groups")) << md.output;
}

}  // namespace
}  // namespace lrb

namespace lrb {
namespace {

stats::LineFit fit_with(double slope, double lo, double hi) {
  stats::LineFit f;
  f.slope = slope;
  f.slope_ci = stats::Interval{lo, hi};
  return f;
}

TEST(ReportReading, ScalingReadsAsAReaderWouldWithinAPracticalTolerance) {
  // Measured slopes that a reader calls linear and quadratic, though their intervals miss 1 and 2.
  EXPECT_EQ(scaling_reading(fit_with(0.996, 0.993, 0.999)), "linear");
  EXPECT_EQ(scaling_reading(fit_with(1.955, 1.912, 1.997)), "quadratic");
  EXPECT_EQ(scaling_reading(fit_with(0.02, -0.01, 0.05)), "constant");
  // Materially different: say so.
  EXPECT_EQ(scaling_reading(fit_with(0.73, 0.70, 0.76)), "sublinear");
  EXPECT_EQ(scaling_reading(fit_with(1.5, 1.4, 1.6)), "between linear and quadratic");
  EXPECT_EQ(scaling_reading(fit_with(2.5, 2.3, 2.7)), "superquadratic");
  EXPECT_EQ(scaling_reading(fit_with(1.5, 0.8, 2.2)), "undecided (linear or quadratic)");
  EXPECT_EQ(scaling_reading(stats::LineFit{}), "–");
}

}  // namespace
}  // namespace lrb
