// ResultsIndex*: DIR/runs.index, the cache that lets reports and status read a folder of
// 100,000 run files without opening them: what it keeps (a report from it equals one from
// the run files), what makes it read a file again (new, rewritten, damaged, touched,
// removed), and what it does with a damaged index or one it cannot write.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <sys/time.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <sstream>

#include "suite/config/run_spec.h"
#include "suite/core/file_digest.h"
#include "suite/core/files.h"
#include "suite/report/report_builder.h"
#include "suite/report/report_input.h"
#include "suite/report/sinks.h"
#include "suite/store/index_payload.h"
#include "suite/contracts/figures.h"
#include "suite/store/results_index.h"
#include "suite/store/results_layout.h"
#include "suite/store/run_file.h"
#include "suite/store/sweep_manifest.h"
#include "suite/store/sweep_status.h"
#include "tests/support/damage.h"
#include "tests/support/report_runs.h"
#include "tests/support/subprocess.h"

namespace lrb {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// Beside the report fixture's runs: runs with evaluation variants (their timing curves and
// probes are what the index keeps of curves and records), and in every run what it drops
// (training curves, records and provenance a report does not show).
void write_folder(const fs::path& dir) {
  test::write_report_fixture(dir);
  for (const RunRecord& r : test::variant_runs()) write_run_file(ResultsLayout(dir).run_file(r.key), r);
  // What the view leaves out, added to every run.
  for (const auto& entry : fs::directory_iterator(ResultsLayout(dir).runs())) {
    RunRecord r = *read_run_file(entry.path()).record;
    r.curves["train_loss"] = std::vector<double>(300, 0.5);
    r.records["model"] = {{"blocks", json::array({1, 2, 3})}};
    r.provenance["host"] = "node-7";
    r.provenance["data_cache"] = {{"file", "/somewhere"}};
    r.provenance["world_size"] = 2;  // kept: a study's plan reads it
    write_run_file(entry.path(), r);
  }
}

std::string report_json(const ReportInput& in) {
  ReportOptions o;
  o.bootstrap.resamples = 500;
  std::ostringstream ss;
  make_report_sink("json")->write(build_report(in, o), ss);
  return ss.str();
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void expect_same_view(const RunRecord& got, const RunRecord& want) {
  EXPECT_EQ(got.key, want.key);
  EXPECT_EQ(got.spec, want.spec);
  EXPECT_EQ(got.status, want.status);
  EXPECT_EQ(got.error, want.error);
  EXPECT_EQ(got.provenance, want.provenance);
  EXPECT_EQ(got.records, want.records);
  ASSERT_EQ(got.metrics.size(), want.metrics.size());
  for (const auto& [name, v] : want.metrics) EXPECT_TRUE(same_bits(got.metrics.at(name), v)) << name;
  EXPECT_EQ(got.curves, want.curves);
}

// The same document to the number types (unsigned, signed, float), which a report's labels
// and cell ids print.
void expect_same_json(const json& got, const json& want, const std::string& where) {
  ASSERT_EQ(got.type(), want.type()) << where;
  if (got.is_object()) {
    ASSERT_EQ(got.size(), want.size()) << where;
    for (auto it = want.begin(); it != want.end(); ++it) {
      ASSERT_TRUE(got.contains(it.key())) << where << "/" << it.key();
      expect_same_json(got.at(it.key()), it.value(), where + "/" + it.key());
    }
  } else if (got.is_array()) {
    ASSERT_EQ(got.size(), want.size()) << where;
    for (std::size_t i = 0; i < got.size(); ++i) expect_same_json(got[i], want[i], where + "/" + std::to_string(i));
  } else if (got.is_number_float()) {
    EXPECT_TRUE(same_bits(got.get<double>(), want.get<double>())) << where;
  } else {
    EXPECT_EQ(got, want) << where;
  }
}

// decode_view_payload reads what json::from_cbor reads, field by field, and refuses what a
// view cannot be.
TEST(ResultsIndexPayload, DecodesAsTheWholeDocumentWould) {
  RunRecord view;
  view.spec = {{"base_seed", 1},
               {"model", {{"name", "maelre"}, {"options", {{"depth", 2}, {"dropout", 0.1}, {"shift", -3}, {"tied", true}}}}},
               {"task", {{"name", "listops"}, {"options", {{"metrics", "accuracy,macro_f1"}, {"none", nullptr}}}, {"seq_len", 784}}},
               {"train", {{"lr", 1e-3}, {"steps", 300}, {"milestones", json::array({100, 200})}, {"big", 18446744073709551615ull}}},
               {"seed_index", 6}};
  view.error = "out of memory";
  view.metrics = {{"eval_accuracy", 0.8125}, {"eval_loss", std::nan("")}, {"params", 1.5e6}, {"steps_done", 300},
                  {"peak_bytes", 1.0e30}, {"tiny", -0.0}};
  view.curves = {{"variant.full.step_seconds", {0.5, 0.25}}, {"variant.sparse.step_seconds", {}}};
  view.provenance = {{"git_revision", "f78000a5485af80daa56307703147125a1f3547b"}, {"git_dirty", false}, {"threads", 4}};
  view.records = {{"task", {{"metrics", json::array({"accuracy", "macro_f1"})}, {"num_classes", 10}}},
                  {"probes", json::array()}};
  const std::string payload = encode_view_payload(view);

  const json whole = json::from_cbor(payload.begin(), payload.end());
  RunRecord got;
  decode_view_payload(payload, got);
  expect_same_json(got.spec, whole.at("spec"), "spec");
  expect_same_json(got.provenance, whole.at("provenance"), "provenance");
  expect_same_json(got.records, whole.at("records"), "records");
  EXPECT_EQ(got.error, whole.at("error").get<std::string>());
  ASSERT_EQ(got.metrics.size(), whole.at("metrics").size());
  for (const auto& [name, v] : whole.at("metrics").items()) EXPECT_TRUE(same_bits(got.metrics.at(name), v.get<double>())) << name;
  EXPECT_EQ(got.curves, view.curves);

  const auto refused = [](const json& doc) {
    const std::vector<std::uint8_t> cbor = json::to_cbor(doc);
    RunRecord r;
    EXPECT_THROW(decode_view_payload(std::string(cbor.begin(), cbor.end()), r), std::exception) << doc.dump();
  };
  json doc = json::from_cbor(payload.begin(), payload.end());
  json missing = doc;
  missing.erase("records");
  refused(missing);
  json text_metric = doc;
  text_metric["metrics"]["eval_accuracy"] = "high";
  refused(text_metric);
  json nested_metric = doc;
  nested_metric["metrics"]["eval_accuracy"] = json::array({0.5});
  refused(nested_metric);
  json bad_error = doc;
  bad_error["error"] = 3;
  refused(bad_error);
  refused(json::array({doc}));
  RunRecord r;
  EXPECT_THROW(decode_view_payload(payload.substr(0, payload.size() / 2), r), std::exception);
  EXPECT_THROW(decode_view_payload(payload + "x", r), std::exception);
}

// A figure lrbench does not know (a model built out of tree) keeps its recorded unit and
// direction through the index, and a program that reads the index learns it; lrbench's
// own figures are not repeated in every payload.
TEST(ResultsIndexPayload, KeepsTheRecordedFiguresThatAreNotLrbenchsOwn) {
  RunRecord full;
  full.spec = {{"seed_index", 0}};
  full.metrics = {{"peak_bytes", 1e6}, {"lrb_index_test_out_of_tree_gap", 0.25}};
  full.figures = {{"peak_bytes", {"bytes", "lower"}}, {"lrb_index_test_out_of_tree_gap", {"", "lower"}}};
  const RunRecord view = index_view(full);
  EXPECT_EQ(view.figures.size(), 1u) << "peak_bytes is the runner's: every program knows it";
  RunRecord got;
  decode_view_payload(encode_view_payload(view), got);
  ASSERT_EQ(got.figures.count("lrb_index_test_out_of_tree_gap"), 1u);
  EXPECT_EQ(got.figures.at("lrb_index_test_out_of_tree_gap"), (RecordedFigure{"", "lower"}));
  EXPECT_EQ(figure_direction("lrb_index_test_out_of_tree_gap"), Direction::Lower);
  // A payload whose figure is not [unit, direction] is refused.
  json doc = json::from_cbor(encode_view_payload(view));
  doc["figures"]["lrb_index_test_out_of_tree_gap"] = json::array({"", "sideways"});
  const std::vector<std::uint8_t> cbor = json::to_cbor(doc);
  RunRecord r;
  EXPECT_THROW(decode_view_payload(std::string(cbor.begin(), cbor.end()), r), std::exception);
}

class ResultsIndex : public ::testing::Test {
 protected:
  void SetUp() override { write_folder(dir_.path()); }
  const fs::path& dir() const { return dir_.path(); }
  fs::path index() const { return ResultsLayout(dir()).index(); }
  fs::path some_run_file() const {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(ResultsLayout(dir()).runs())) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    return files.at(1);
  }
  ResultsScan scan(IndexRefresh& r) { return scan_runs_indexed(dir(), r); }

  test::TempDir dir_;
};

TEST_F(ResultsIndex, TheFirstScanReadsEveryFileAndTheNextNone) {
  IndexRefresh first, second;
  const ResultsScan a = scan(first);
  EXPECT_TRUE(first.written);
  EXPECT_EQ(first.read, a.runs.size());
  EXPECT_EQ(first.reused, 0u);
  EXPECT_TRUE(first.ignored.empty());
  const ResultsScan b = scan(second);
  EXPECT_FALSE(second.written) << "nothing changed: the index is not rewritten";
  EXPECT_EQ(second.read, 0u);
  EXPECT_EQ(second.reused, a.runs.size());

  // Each run as the run files give it, in its view, bit for bit.
  const ResultsScan files = scan_runs(dir());
  ASSERT_EQ(b.runs.size(), files.runs.size());
  ASSERT_GT(b.runs.size(), 10u);
  for (std::size_t i = 0; i < files.runs.size(); ++i) expect_same_view(b.runs[i], index_view(files.runs[i]));
  EXPECT_TRUE(b.bad.empty());
}

TEST_F(ResultsIndex, AReportFromTheIndexEqualsOneFromTheRunFiles) {
  ReportInput from_files;
  ResultsScan files = scan_runs(dir());
  from_files.runs = std::move(files.runs);
  from_files.sources = {dir().string()};
  const std::string want = report_json(from_files);
  // The variant tables (timings from curves, probes from records) are part of the comparison.
  EXPECT_NE(want.find("\"timings\": 12"), std::string::npos);
  EXPECT_NE(want.find("pool1"), std::string::npos);

  report_json(load_report_input({dir()}));  // builds the index
  ASSERT_TRUE(fs::exists(index()));
  IndexRefresh r;
  scan(r);
  ASSERT_EQ(r.read, 0u) << "the second report reads the index only";
  EXPECT_EQ(report_json(load_report_input({dir()})), want);
}

TEST_F(ResultsIndex, NewRewrittenAndRemovedRunFilesAreNoticed) {
  IndexRefresh r0;
  const ResultsScan before = scan(r0);

  // Rewritten under the same name (a run recomputed), one added, one removed.
  const fs::path changed = some_run_file();
  RunRecord rec = *read_run_file(changed).record;
  rec.metrics["eval_accuracy"] = 0.123;
  write_run_file(changed, rec);
  test::RunDraft d;
  d.seed = 77;
  d.metrics = {{"eval_accuracy", 0.5}};
  const RunRecord added = test::write_run(dir(), d);
  const RunRecord& gone = before.runs.back();
  fs::remove(ResultsLayout(dir()).run_file(gone.key));

  IndexRefresh r;
  const ResultsScan after = scan(r);
  EXPECT_EQ(r.read, 2u);
  EXPECT_EQ(r.dropped, 1u);
  EXPECT_EQ(r.reused, before.runs.size() - 2);
  EXPECT_TRUE(r.written);
  EXPECT_EQ(after.runs.size(), before.runs.size());
  bool saw_change = false, saw_added = false;
  for (const auto& run : after.runs) {
    EXPECT_NE(run.key, gone.key);
    if (run.key == rec.key) saw_change = run.metrics.at("eval_accuracy") == 0.123;
    saw_added = saw_added || run.key == added.key;
  }
  EXPECT_TRUE(saw_change);
  EXPECT_TRUE(saw_added);
}

// A byte flipped in place, even with the modification time put back as it was: the
// status-change time moves, the index does not trust the entry, and the file is bad.
TEST_F(ResultsIndex, ARunFileDamagedAfterIndexingIsNeverCountedFromTheIndex) {
  IndexRefresh r0;
  scan(r0);
  const fs::path victim = some_run_file();
  const std::string key = victim.stem().string();
  struct stat st {};
  ASSERT_EQ(::stat(victim.c_str(), &st), 0);
  test::flip_byte(victim, fs::file_size(victim) / 2, 0x40);
  const struct timespec times[2] = {st.st_atim, st.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, victim.c_str(), times, 0), 0);

  IndexRefresh r;
  const ResultsScan after = scan(r);
  EXPECT_EQ(r.read, 1u);
  ASSERT_EQ(after.bad.size(), 1u);
  EXPECT_EQ(after.bad[0].file, victim);
  for (const auto& run : after.runs) EXPECT_NE(run.key, key);
  // Status reads the same way: the damaged run is missing, never finished.
  const SweepStatus s = sweep_status(dir(), {key});
  EXPECT_EQ(s.missing, 1);
  EXPECT_EQ(s.finished(), 0);

  // And the bad file's entry is kept with its reason until the file changes again.
  IndexRefresh again;
  const ResultsScan third = scan(again);
  EXPECT_EQ(again.read, 0u);
  ASSERT_EQ(third.bad.size(), 1u);
  EXPECT_EQ(third.bad[0].reason, after.bad[0].reason);
}

TEST_F(ResultsIndex, ADamagedIndexIsIgnoredAndRebuilt) {
  IndexRefresh r0;
  const ResultsScan want = scan(r0);
  for (const std::uint64_t offset : {std::uint64_t{0}, std::uint64_t{kDigestBlockBytes + 3}, fs::file_size(index()) - 1}) {
    SCOPED_TRACE(offset);
    test::flip_byte(index(), offset, 0x01);
    IndexRefresh r;
    const ResultsScan got = scan(r);
    EXPECT_FALSE(r.ignored.empty());
    EXPECT_EQ(r.read, want.runs.size());
    EXPECT_TRUE(r.written);
    ASSERT_EQ(got.runs.size(), want.runs.size());
  }
  // Truncated, empty.
  fs::resize_file(index(), fs::file_size(index()) / 2);
  IndexRefresh r1;
  scan(r1);
  EXPECT_NE(r1.ignored.find("truncated"), std::string::npos) << r1.ignored;
  fs::resize_file(index(), 0);
  IndexRefresh r2;
  EXPECT_EQ(scan(r2).runs.size(), want.runs.size());
  EXPECT_FALSE(r2.ignored.empty());
}

// `lrbench plan` and a study's budget warning divide run time by the runs the study ran at a
// time (the job's world size): the index keeps it, so a plan from the index is not off by the
// rank count (it was: plans of 2-rank studies gave twice the wall time).
TEST_F(ResultsIndex, TheViewKeepsTheWorldSizeAPlanDividesRunTimeBy) {
  IndexRefresh first, second;
  scan(first);
  const ResultsScan b = scan(second);
  ASSERT_EQ(second.read, 0u) << "read from the index";
  ASSERT_FALSE(b.runs.empty());
  for (const RunRecord& r : b.runs) EXPECT_EQ(r.provenance.value("world_size", 0), 2) << r.key;
}

// Sealed, so past the digest, but written for another view of the runs: rebuilt.
TEST_F(ResultsIndex, AnIndexOfAnotherVersionIsRebuilt) {
  IndexRefresh r0;
  scan(r0);
  std::string bytes = read_file(index());
  const auto at = bytes.find(" view ");
  ASSERT_NE(at, std::string::npos);
  bytes[at + 6] = '9';
  seal_digest(bytes);
  write_file_atomic(index(), bytes);
  IndexRefresh r;
  scan(r);
  EXPECT_NE(r.ignored.find("another lrbench or for another view"), std::string::npos) << r.ignored;
  EXPECT_EQ(r.reused, 0u);
  EXPECT_TRUE(r.written);
}

// Sealed, of this version, but a header field lrbench never writes (a negative or huge step
// count, steps on a finished run): the index is not trusted, and rebuilt from the files.
TEST_F(ResultsIndex, AHeaderFieldOutOfRangeIsNotTrusted) {
  IndexRefresh r0;
  scan(r0);
  for (const char* steps : {"-5", "9223372036854775807", "12"}) {
    std::string bytes = read_file(index());
    const auto header = bytes.find("\nR ", kDigestBlockBytes);
    ASSERT_NE(header, std::string::npos);
    const auto eol = bytes.find('\n', header + 1);
    const auto last = bytes.rfind(' ', eol);
    bytes.replace(last + 1, eol - last - 1, steps);  // every run here is ok: 12 steps is a lie too
    seal_digest(bytes);
    write_file_atomic(index(), bytes);
    IndexRefresh r;
    scan(r);
    EXPECT_NE(r.ignored.find("step count is out of range"), std::string::npos) << steps << ": " << r.ignored;
    EXPECT_EQ(r.reused, 0u) << steps;
    EXPECT_TRUE(r.written) << steps;
  }
}

// Sealed, of this version, but an entry that does not decode (a faulty writer): that file is
// read again, and the rest of the index is used.
TEST_F(ResultsIndex, AnEntryThatDoesNotDecodeIsReadFromItsFile) {
  IndexRefresh r0;
  const ResultsScan want = scan(r0);
  std::string bytes = read_file(index());
  const auto header = bytes.find("\nR ", kDigestBlockBytes);
  ASSERT_NE(header, std::string::npos);
  const auto eol = bytes.find('\n', header + 1);
  const std::size_t name_bytes = std::stoul(bytes.substr(header + 3));
  bytes[eol + 1 + name_bytes] = '\xff';  // the CBOR map's first byte: a "break" where a map must begin
  seal_digest(bytes);
  write_file_atomic(index(), bytes);
  IndexRefresh r;
  const ResultsScan got = scan(r);
  EXPECT_TRUE(r.ignored.empty()) << r.ignored;
  EXPECT_EQ(r.read, 1u);
  EXPECT_EQ(r.reused, want.runs.size() - 1);
  ASSERT_EQ(got.runs.size(), want.runs.size());
  for (std::size_t i = 0; i < got.runs.size(); ++i) expect_same_view(got.runs[i], want.runs[i]);
}

// A folder, or a FIFO, where the index goes: never opened as one (no hang on the FIFO),
// never replaced; the scan is right and says why the index could not be written.
TEST_F(ResultsIndex, AnIndexPathThatIsNotAFileIsLeftAloneAndTheScanStillRight) {
  const std::size_t runs = scan_runs(dir()).runs.size();
  for (const bool fifo : {false, true}) {
    SCOPED_TRACE(fifo ? "fifo" : "folder");
    fs::remove_all(index());
    if (fifo)
      ASSERT_EQ(::mkfifo(index().c_str(), 0600), 0);
    else
      fs::create_directory(index());
    IndexRefresh r;
    EXPECT_EQ(scan(r).runs.size(), runs);
    EXPECT_FALSE(r.written);
    EXPECT_FALSE(r.write_problem.empty());
    EXPECT_NE(r.ignored.find("not a regular file"), std::string::npos) << r.ignored;
    EXPECT_EQ(fs::is_fifo(index()), fifo);
    // The report says so and is right.
    const ReportInput in = load_report_input({dir()});
    EXPECT_EQ(in.runs.size(), runs);
    bool noted = false;
    for (const auto& n : in.notes) noted = noted || n.find("could not be updated") != std::string::npos;
    EXPECT_TRUE(noted);
  }
}

TEST_F(ResultsIndex, StatusFromTheIndexEqualsStatusFromTheRunFiles) {
  std::vector<std::string> keys;
  for (const auto& run : scan_runs(dir()).runs) keys.push_back(run.key);
  keys.push_back(std::string(64, 'a'));  // never run
  const std::string want = status_line(sweep_status(dir(), keys));
  IndexRefresh r;
  scan(r);
  EXPECT_EQ(status_line(sweep_status(dir(), keys)), want);
  EXPECT_NE(want.find("missing=1"), std::string::npos) << want;
  EXPECT_NE(want.find("stopped=1"), std::string::npos) << want;
}

TEST_F(ResultsIndex, TemporaryFilesAndOtherNamesAreNotIndexed) {
  write_file_atomic(ResultsLayout(dir()).runs() / "notes.txt", "not a run");
  const fs::path tmp = temp_path_for(ResultsLayout(dir()).run_file(std::string(64, 'b')));
  write_file_atomic(tmp, "half written");
  IndexRefresh r;
  const ResultsScan s = scan(r);
  EXPECT_TRUE(s.bad.empty());
  EXPECT_EQ(s.runs.size(), scan_runs(dir()).runs.size());
}

}  // namespace
}  // namespace lrb

namespace lrb {
namespace {

// The command: what it read, what it reused, and a folder that is not a results folder.
TEST(ResultsIndexCommand, RefreshesAndSaysWhatItDid) {
  test::TempDir t;
  test::write_report_fixture(t.path());
  const auto first = test::run({test::lrbench(), "index", t.path().string()});
  EXPECT_EQ(first.code, 0) << first.output;
  EXPECT_NE(first.output.find("0 entries reused"), std::string::npos) << first.output;
  const auto second = test::run({test::lrbench(), "index", t.path().string()});
  EXPECT_NE(second.output.find("0 file(s) read"), std::string::npos) << second.output;
  EXPECT_NE(second.output.find("already up to date"), std::string::npos) << second.output;
  const auto rebuilt = test::run({test::lrbench(), "index", t.path().string(), "--rebuild"});
  EXPECT_NE(rebuilt.output.find("0 entries reused"), std::string::npos) << rebuilt.output;
  const auto report = test::run({test::lrbench(), "report", t.path().string()});
  EXPECT_EQ(report.code, 0) << report.output;

  const auto none = test::run({test::lrbench(), "index", (t.path() / "runs").string()});
  EXPECT_EQ(none.code, 2) << none.output;
  EXPECT_NE(none.output.find("does not exist; give the folder passed to `lrbench run --out`"), std::string::npos)
      << none.output;
}

// report, leaderboard, index, merge and status (without --spec) run in lrbench-results, which
// does not load LibTorch; a folder without it (a program of lrbench_add_program) runs them in
// lrbench-core.
TEST(ResultsIndexCommand, ResultsCommandsRunWithoutLibTorchAndFallBackToTheCore) {
  test::TempDir t;
  test::write_report_fixture(t / "results");
  const fs::path built = fs::path(test::lrbench()).parent_path();
  const auto install = [&](const std::string& folder, const std::vector<std::string>& programs) {
    fs::create_directories(t / folder);
    for (const auto& p : programs) fs::copy_file(built / p, t / folder / p);
    return (t / folder / "lrbench").string();
  };
  const std::string results_only = install("results-only", {"lrbench", "lrbench-results"});
  const auto report = test::run({results_only, "report", (t / "results").string()});
  EXPECT_EQ(report.code, 0) << report.output;
  EXPECT_NE(report.output.find("lrbench report: "), std::string::npos) << report.output;
  const auto index = test::run({results_only, "index", (t / "results").string()});
  EXPECT_EQ(index.code, 0) << index.output;
  SweepManifest manifest;
  manifest.sweep = "fixture";
  for (const auto& r : scan_runs(t / "results").runs) manifest.runs.push_back(r.key);
  write_sweep_manifest(t / "results", manifest);
  const auto status = test::run({results_only, "status", (t / "results").string()});
  EXPECT_EQ(status.code, 0) << status.output;
  EXPECT_NE(status.output.find("total="), std::string::npos) << status.output;
  // A sweep file is expanded with the models' option schemas: lrbench-core's, never this program's.
  const fs::path sweep = t / "sweep.toml";
  write_file_atomic(sweep, "[sweep]\nname = \"x\"\n");
  const auto with_spec = test::run({results_only, "status", (t / "results").string(), "--spec", sweep.string()});
  EXPECT_EQ(with_spec.code, 1) << with_spec.output;
  EXPECT_NE(with_spec.output.find("lrbench-core: No such file"), std::string::npos) << with_spec.output;
  const auto direct = test::run({(built / "lrbench-results").string(), "status", (t / "results").string(), "--spec=" + sweep.string()});
  EXPECT_EQ(direct.code, 2) << direct.output;
  EXPECT_NE(direct.output.find("no models built in"), std::string::npos) << direct.output;
  const auto list = test::run({results_only, "list"});  // not a results command: lrbench-core's
  EXPECT_EQ(list.code, 1) << list.output;
  EXPECT_NE(list.output.find("lrbench-core: No such file"), std::string::npos) << list.output;

  const std::string core_only = install("core-only", {"lrbench", "lrbench-core"});
  const auto fallback = test::run({core_only, "report", (t / "results").string()});
  EXPECT_EQ(fallback.code, 0) << fallback.output;
  EXPECT_EQ(fallback.output, report.output);
}

}  // namespace
}  // namespace lrb
