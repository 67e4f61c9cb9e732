// TidyRows*: `lrbench export`'s rows (suite/report/tidy_rows.h): one per run and figure,
// every setting its own column, units and directions from the figure catalogue, failures,
// unreadable files and skipped combinations as rows with their reasons. ExportCommand*:
// the program writes them, refuses what it must, and pandas reads them in one line.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "suite/core/exit_codes.h"
#include "suite/report/tidy_rows.h"
#include "tests/support/report_runs.h"
#include "tests/support/subprocess.h"

namespace lrb {
namespace {

using json = nlohmann::json;

// A CSV line split into fields (RFC 4180; a quoted field may hold commas and quotes).
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

// The CSV as a header and rows of named fields (no field here holds a line break).
struct Csv {
  std::vector<std::string> header;
  std::vector<std::map<std::string, std::string>> rows;
};
Csv parse_csv(const std::string& text) {
  Csv csv;
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  csv.header = csv_fields(line);
  while (std::getline(in, line)) {
    const auto fields = csv_fields(line);
    EXPECT_EQ(fields.size(), csv.header.size()) << line;
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < fields.size() && i < csv.header.size(); ++i) row[csv.header[i]] = fields[i];
    csv.rows.push_back(std::move(row));
  }
  return csv;
}

std::string rows_of(const ReportInput& input, TidyFormat format, std::size_t* count = nullptr) {
  std::ostringstream out;
  const std::size_t n = write_tidy_rows(input, format, out);
  if (count != nullptr) *count = n;
  return out.str();
}

RunRecord run(const std::string& model, int seed, std::map<std::string, double> metrics, json options = json::object()) {
  test::RunDraft d;
  d.model = model;
  d.seed = seed;
  d.metrics = std::move(metrics);
  d.model_options = std::move(options);
  return test::make_run(d);
}

ReportInput two_models() {
  ReportInput in;
  in.runs.push_back(run("transformer", 0, {{"eval_accuracy", 0.61}, {"step_seconds_median", 0.25}}, {{"dim", 16}}));
  in.runs.push_back(run("linear", 1, {{"eval_accuracy", 0.7}, {"allreduce_share", 0.125}}, {{"feature_map", "elu"}}));
  in.runs.back().provenance["gpu"] = {{"name", "NVIDIA H200"}, {"index", 0}};  // as a CUDA run records it
  return in;
}

const std::map<std::string, std::string>& row_of(const Csv& csv, const std::string& model, const std::string& figure) {
  for (const auto& r : csv.rows)
    if (r.at("model") == model && r.at("figure") == figure) return r;
  ADD_FAILURE() << "no row for " << model << " " << figure;
  static const std::map<std::string, std::string> none;
  return none;
}

TEST(TidyRows, OneRowPerRunAndFigureWithEverySettingAsItsOwnColumn) {
  std::size_t count = 0;
  const Csv csv = parse_csv(rows_of(two_models(), TidyFormat::Csv, &count));
  EXPECT_EQ(count, 4u);
  ASSERT_EQ(csv.rows.size(), 4u);
  const std::vector<std::string> expected = {
      "run_key", "sweep", "status", "error", "task", "model", "seed",
      // the index each random stream drew at: the seed's, unless [sweep] vary or fixed named it
      "stream.data", "stream.order", "stream.init", "stream.dropout", "base_seed", "device", "ranks_per_run",
      // task (seq_len first), model, train: the union over both models' options; precision
      // and the budgets though the specs leave them out at their defaults (train_identity)
      "task.seq_len", "task.train_size", "model.dim", "model.feature_map", "train.batch_size", "train.flops", "train.lr",
      "train.precision", "train.seconds", "train.steps", "train.warmup_share",
      "figure", "value", "unit", "direction", "git_revision", "git_dirty", "device_name", "gpu_name", "threads", "world_size"};
  EXPECT_EQ(csv.header, expected);
  const auto& acc = row_of(csv, "transformer", "eval_accuracy");
  EXPECT_EQ(acc.at("value"), "0.61");
  EXPECT_EQ(acc.at("model.dim"), "16");
  EXPECT_EQ(acc.at("model.feature_map"), "");  // not one of the transformer's settings
  EXPECT_EQ(acc.at("task.seq_len"), "64");
  EXPECT_EQ(acc.at("train.lr"), "0.001");
  EXPECT_EQ(acc.at("train.precision"), "fp32");
  EXPECT_EQ(acc.at("seed"), "0");
  EXPECT_EQ(acc.at("status"), "ok");
  EXPECT_EQ(acc.at("ranks_per_run"), "1");
  EXPECT_EQ(acc.at("stream.init"), acc.at("seed"));
  EXPECT_EQ(acc.at("git_revision"), "abc1234");
  EXPECT_EQ(acc.at("git_dirty"), "false");
  EXPECT_EQ(acc.at("threads"), "1");
  EXPECT_EQ(acc.at("gpu_name"), "");
  EXPECT_EQ(row_of(csv, "linear", "eval_accuracy").at("gpu_name"), "NVIDIA H200");  // from provenance gpu.name
  EXPECT_EQ(acc.at("run_key"), two_models().runs[0].key);
  EXPECT_EQ(row_of(csv, "linear", "eval_accuracy").at("model.feature_map"), "elu");
}

TEST(TidyRows, UnitAndDirectionComeFromTheFigureCatalogue) {
  const Csv csv = parse_csv(rows_of(two_models(), TidyFormat::Csv));
  EXPECT_EQ(row_of(csv, "transformer", "eval_accuracy").at("direction"), "higher");
  EXPECT_EQ(row_of(csv, "transformer", "step_seconds_median").at("direction"), "lower");
  EXPECT_EQ(row_of(csv, "transformer", "step_seconds_median").at("unit"), "seconds");
  // The share of a step spent exchanging gradients: lower is better.
  EXPECT_EQ(row_of(csv, "linear", "allreduce_share").at("direction"), "lower");
}

TEST(TidyRows, FailuresUnreadableFilesAndSkippedCombinationsAreRowsWithTheirReasons) {
  ReportInput in;
  RunRecord failed = run("linear", 2, {});
  failed.status = RunStatus::Failed;
  failed.error = "non-finite loss at step 3, \"lr\" too high";
  in.runs.push_back(failed);
  RunRecord stopped = run("linear", 3, {{"steps_done", 12}});
  stopped.status = RunStatus::Stopped;
  stopped.error = "stopped by SIGTERM at step 12";
  in.runs.push_back(stopped);
  in.bad.push_back({"runs/abc.h5", "checksum mismatch in /metrics"});
  in.skipped.push_back("listops seq_len=64 / mvit: the model takes images");
  const Csv csv = parse_csv(rows_of(in, TidyFormat::Csv));
  ASSERT_EQ(csv.rows.size(), 4u);
  std::map<std::string, std::map<std::string, std::string>> by_status;
  for (const auto& r : csv.rows) by_status[r.at("status")] = r;
  EXPECT_EQ(by_status["failed"].at("error"), failed.error);  // quoted, with its comma and quotes
  EXPECT_EQ(by_status["failed"].at("figure"), "");
  EXPECT_EQ(by_status["failed"].at("value"), "");
  EXPECT_EQ(by_status["stopped"].at("figure"), "steps_done");
  EXPECT_EQ(by_status["stopped"].at("value"), "12");
  EXPECT_EQ(by_status["unreadable"].at("error"), "runs/abc.h5: checksum mismatch in /metrics");
  EXPECT_EQ(by_status["unreadable"].at("run_key"), "");
  EXPECT_EQ(by_status["skipped"].at("error"), "listops seq_len=64 / mvit: the model takes images");
}

TEST(TidyRows, ValuesKeepEveryDigitAndNonFiniteValuesStayReadable) {
  ReportInput in;
  const double third = 1.0 / 3.0;
  in.runs.push_back(run("transformer", 0,
                        {{"eval_accuracy", third},
                         {"eval_loss", std::numeric_limits<double>::quiet_NaN()},
                         {"train_loss", std::numeric_limits<double>::infinity()}}));
  const Csv csv = parse_csv(rows_of(in, TidyFormat::Csv));
  EXPECT_EQ(std::stod(row_of(csv, "transformer", "eval_accuracy").at("value")), third);  // round-trips exactly
  EXPECT_EQ(row_of(csv, "transformer", "eval_loss").at("value"), "nan");
  EXPECT_EQ(row_of(csv, "transformer", "train_loss").at("value"), "inf");

  // JSON has no NaN: null there.
  std::istringstream lines(rows_of(in, TidyFormat::Jsonl));
  std::string line;
  std::map<std::string, json> by_figure;
  while (std::getline(lines, line)) {
    const json row = json::parse(line);
    by_figure[row.at("figure").get<std::string>()] = row;
  }
  ASSERT_EQ(by_figure.size(), 3u);
  EXPECT_EQ(by_figure["eval_accuracy"].at("value").get<double>(), third);
  EXPECT_TRUE(by_figure["eval_loss"].at("value").is_null());
  EXPECT_TRUE(by_figure["train_loss"].at("value").is_null());
}

TEST(TidyRows, JsonLinesHoldTheSameRowsWithTypedValues) {
  std::size_t count = 0;
  std::istringstream lines(rows_of(two_models(), TidyFormat::Jsonl, &count));
  EXPECT_EQ(count, 4u);
  std::string line;
  std::vector<json> rows;
  while (std::getline(lines, line)) rows.push_back(json::parse(line));
  ASSERT_EQ(rows.size(), 4u);
  for (const auto& r : rows) {
    EXPECT_TRUE(r.at("seed").is_number_integer());
    EXPECT_TRUE(r.at("task.seq_len").is_number_integer());
    EXPECT_TRUE(r.at("git_dirty").is_boolean());
    EXPECT_TRUE(r.at("error").is_null());
    // A setting a run does not have is absent, not null.
    EXPECT_NE(r.contains("model.dim"), r.contains("model.feature_map")) << r.dump();
  }
}

TEST(TidyRows, FormatsByNameAndByFileExtension) {
  EXPECT_EQ(tidy_format_from_name("csv"), TidyFormat::Csv);
  EXPECT_EQ(tidy_format_from_name("jsonl"), TidyFormat::Jsonl);
  EXPECT_FALSE(tidy_format_from_name("json"));
  EXPECT_EQ(tidy_format_for_file("out/runs.jsonl"), TidyFormat::Jsonl);
  EXPECT_EQ(tidy_format_for_file("runs.csv"), TidyFormat::Csv);
  EXPECT_FALSE(tidy_format_for_file("runs.txt"));
  EXPECT_FALSE(tidy_format_for_file("runs"));
}

// ---------------------------------------------------------------------------------------
// The program

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(ExportCommand, WritesTheRowsAtomicallyAndPandasReadsThemInOneLine) {
  test::TempDir t;
  test::write_report_fixture(t.path());
  const auto out = t / "runs.csv";
  auto r = test::run({test::lrbench(), "export", t.path().string(), "-o", out.string()});
  ASSERT_EQ(r.code, kExitDone) << r.output;
  const Csv csv = parse_csv(read_text(out));
  ASSERT_FALSE(csv.rows.empty());
  std::size_t failed = 0;
  for (const auto& row : csv.rows) failed += row.at("status") == "failed";
  EXPECT_EQ(failed, 1u) << "the failed linear seed is a row";
  // Standard output gives the same bytes; JSON Lines from the file's extension.
  auto to_stdout = test::run({test::lrbench(), "export", t.path().string()});
  ASSERT_EQ(to_stdout.code, kExitDone);
  EXPECT_NE(to_stdout.output.find(read_text(out)), std::string::npos);
  ASSERT_EQ(test::run({test::lrbench(), "export", t.path().string(), "-o", (t / "runs.jsonl").string()}).code, kExitDone);
  const std::string first = read_text(t / "runs.jsonl").substr(0, read_text(t / "runs.jsonl").find('\n'));
  EXPECT_TRUE(json::parse(first).is_object()) << first;

  // The documented line (docs/results.md), where pandas is installed (Debian's
  // python3-pandas comes with python3-statsmodels, which scripts/setup.sh installs).
  if (test::run({"/usr/bin/python3", "-c", "import pandas"}).code != 0)
    GTEST_SKIP() << "pandas is not installed here: the pandas check is skipped";
  const std::string script =
      "import pandas as pd\n"
      "df = pd.read_csv('" + out.string() + "', low_memory=False)\n"
      "acc = df[(df.figure == 'eval_accuracy') & (df.status == 'ok')]\n"
      "m = acc.groupby(['task', 'task.seq_len', 'model'])['value'].mean()\n"
      "assert df['value'].dtype == 'float64', df['value'].dtype\n"
      "assert df['seed'].dtype == 'int64', df['seed'].dtype\n"
      "print('transformer', round(m[('listops', 64, 'transformer')], 6))\n"
      "print('rows', len(df))\n";
  auto py = test::run({"/usr/bin/python3", "-c", script});
  ASSERT_EQ(py.code, 0) << py.output;
  EXPECT_NE(py.output.find("transformer 0.62"), std::string::npos) << py.output;
  EXPECT_NE(py.output.find("rows " + std::to_string(csv.rows.size())), std::string::npos) << py.output;
}

TEST(ExportCommand, RefusesWhatItMustBeforeWritingAnything) {
  test::TempDir t;
  test::write_report_fixture(t.path());
  const std::string dir = t.path().string();
  // A name whose extension is another format, or disagrees with --format.
  auto txt = test::run({test::lrbench(), "export", dir, "-o", (t / "runs.txt").string()});
  EXPECT_EQ(txt.code, kExitUsage) << txt.output;
  EXPECT_NE(txt.output.find("export writes .csv or .jsonl files"), std::string::npos) << txt.output;
  auto both = test::run({test::lrbench(), "export", dir, "--format", "jsonl", "-o", (t / "runs.csv").string()});
  EXPECT_EQ(both.code, kExitUsage) << both.output;
  auto unknown = test::run({test::lrbench(), "export", dir, "--format", "parquet"});
  EXPECT_EQ(unknown.code, kExitUsage) << unknown.output;
  // A FIFO or a device at -o is never opened or replaced.
  const auto fifo = t / "fifo.csv";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto f = test::run({test::lrbench(), "export", dir, "-o", fifo.string()}, std::chrono::seconds(60));
  EXPECT_EQ(f.code, kExitUsage) << f.output;
  auto dev = test::run({test::lrbench(), "export", dir, "-o", "/dev/null"});
  EXPECT_EQ(dev.code, kExitUsage) << dev.output;
  // A folder with no results says what to do.
  test::TempDir empty;
  auto none = test::run({test::lrbench(), "export", empty.path().string()});
  EXPECT_EQ(none.code, kExitUsage) << none.output;
  EXPECT_FALSE(std::filesystem::exists(t / "runs.txt"));
  EXPECT_FALSE(std::filesystem::exists(t / "runs.csv"));
}

}  // namespace
}  // namespace lrb
