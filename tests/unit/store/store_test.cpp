#include <gtest/gtest.h>

#include "tests/support/damage.h"
#include <hdf5.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>

#include "suite/config/run_spec.h"
#include "suite/contracts/figures.h"
#include "suite/core/errors.h"
#include "suite/core/file_digest.h"
#include "suite/core/files.h"
#include "suite/core/process_info.h"
#include "suite/hdf5/h5.h"
#include "suite/store/results_folder.h"
#include "suite/store/results_layout.h"
#include "suite/store/run_file.h"
#include "suite/store/text_dataset.h"

namespace lrb {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// A full record: every field set, NaN and infinities, an empty curve, UTF-8 error text and a
// records JSON over 100 KiB. `tag` makes the spec (and so the key) unique and findable.
RunRecord make_record(const std::string& tag, int seed = 0, RunStatus status = RunStatus::Failed) {
  RunRecord r;
  r.spec = {{"version", 1},
            {"task", {{"name", "listops"}, {"seq_len", 512}, {"options", {{"marker", "SPECMARK_" + tag + "_END"}}}}},
            {"model", {{"name", "transformer"}, {"options", {{"dim", 64}, {"depth", 2}}}}},
            {"train", {{"steps", 300}, {"lr", 1e-3}}},
            {"seed_index", seed},
            {"base_seed", 1},
            {"device", "cpu"}};
  r.key = run_key_of(r.spec);
  r.provenance = {{"host", "node-1"}, {"rank", 3}, {"threads", 2}, {"git", {{"revision", "abc"}, {"dirty", true}}}};
  r.status = status;
  r.error = status == RunStatus::Ok ? "" : "non-finite loss at step 17: perte non finie — потеря ✗ 損失";
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  r.metrics = {{"eval_accuracy", 0.625}, {"train_loss", nan}, {"peak_bytes", 1.5e9},
               {"grad_norm_max", inf},   {"score_min", -inf},  {"steps_done", 17}};
  std::vector<double> loss(1000);
  for (size_t i = 0; i < loss.size(); ++i) loss[i] = 2.0 / (1.0 + 0.01 * static_cast<double>(i));
  r.curves = {{"train_loss", loss}, {"train_step", std::vector<double>(1000, 1.0)}, {"eval_step", {}}};
  json blocks = json::array();
  for (int i = 0; i < 3000; ++i) blocks.push_back({{"block", i}, {"attention", "linear"}, {"pad", "xxxxxxxxxx"}});
  r.records = {{"task", {{"metrics", {"accuracy"}}}}, {"blocks", blocks}};
  return r;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void expect_same(const RunRecord& a, const RunRecord& b) {
  EXPECT_EQ(a.key, b.key);
  EXPECT_EQ(a.spec, b.spec);
  EXPECT_EQ(a.provenance, b.provenance);
  EXPECT_EQ(a.records, b.records);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.error, b.error);
  ASSERT_EQ(a.metrics.size(), b.metrics.size());
  for (const auto& [name, v] : a.metrics) {
    ASSERT_TRUE(b.metrics.count(name)) << name;
    EXPECT_TRUE(same_bits(v, b.metrics.at(name))) << name << ": " << v << " vs " << b.metrics.at(name);
  }
  ASSERT_EQ(a.curves.size(), b.curves.size());
  for (const auto& [name, v] : a.curves) {
    ASSERT_TRUE(b.curves.count(name)) << name;
    const auto& w = b.curves.at(name);
    ASSERT_EQ(v.size(), w.size()) << name;
    for (size_t i = 0; i < v.size(); ++i) ASSERT_TRUE(same_bits(v[i], w[i])) << name << "[" << i << "]";
  }
}

std::vector<std::string> names_in(const fs::path& folder) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(folder)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

using test::chunk_offset;
using test::flip_byte;
void edit_root(const fs::path& file, const std::function<void(hid_t)>& edit) { test::edit_hdf5_root(file, edit); }

// Rewrites a run file's schema_version attribute (the file is resealed after).
void set_schema_version(hid_t f, long long version) {
  ASSERT_GE(H5Adelete(f, "schema_version"), 0);
  const hid_t s = H5Screate(H5S_SCALAR);
  const hid_t a = H5Acreate2(f, "schema_version", H5T_STD_I64LE, s, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(H5Awrite(a, H5T_NATIVE_LLONG, &version), 0);
  H5Aclose(a);
  H5Sclose(s);
}

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    h5::silence_error_printing();
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           (std::string("lrb_store_") + info->name() + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "runs");
  }
  void TearDown() override {
    // A leaked handle would keep a file open, and HDF5 would then serve later opens from
    // its caches instead of the bytes on disk.
    EXPECT_EQ(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL), 0);
    fs::remove_all(dir_);
  }
  fs::path write(const RunRecord& r) {
    const fs::path p = ResultsLayout(dir_).run_file(r.key);
    write_run_file(p, r);
    return p;
  }
  fs::path dir_;
};

TEST_F(StoreTest, RoundTripsAFullRecord) {
  const RunRecord r = make_record("roundtrip");
  const fs::path p = write(r);
  EXPECT_EQ(names_in(dir_ / "runs"), std::vector<std::string>{r.key + ".h5"});  // no temporary left
  const RunFileCheck c = read_run_file(p);
  ASSERT_TRUE(c.valid()) << c.reason;
  expect_same(r, *c.record);
  EXPECT_GT(r.records.dump().size(), 100u * 1024);
}

TEST_F(StoreTest, OkRecordWithNoMetricsOrCurves) {
  RunRecord r = make_record("bare", 0, RunStatus::Ok);
  r.metrics.clear();
  r.curves.clear();
  r.records = json::object();
  const RunFileCheck c = read_run_file(write(r));
  ASSERT_TRUE(c.valid()) << c.reason;
  expect_same(r, *c.record);
}

TEST_F(StoreTest, FailedWriteLeavesNothingBehind) {
  const RunRecord r = make_record("blocked");
  const fs::path p = ResultsLayout(dir_).run_file(r.key);
  fs::create_directories(p / "occupied");  // a non-empty folder where the file should go: rename fails
  EXPECT_THROW(write_run_file(p, r), EnvironmentError);
  EXPECT_EQ(names_in(dir_ / "runs"), std::vector<std::string>{r.key + ".h5"});
  EXPECT_TRUE(fs::is_directory(p));
}

TEST_F(StoreTest, TruncatedFileIsReported) {
  const fs::path p = write(make_record("truncated"));
  fs::resize_file(p, fs::file_size(p) / 2);
  const RunFileCheck c = read_run_file(p);
  EXPECT_FALSE(c.valid());
  EXPECT_EQ(c.reason.rfind("truncated: ", 0), 0u) << c.reason;
  // Bytes appended are caught the same way.
  const fs::path q = write(make_record("appended"));
  std::ofstream(q, std::ios::binary | std::ios::app) << "x";
  EXPECT_EQ(read_run_file(q).reason.rfind("bytes appended after the end", 0), 0u) << read_run_file(q).reason;
}

TEST_F(StoreTest, NotHdf5AndEmptyFilesAreReported) {
  const fs::path text = dir_ / "runs" / "text.h5";
  std::ofstream(text) << "not hdf5 at all";
  EXPECT_EQ(read_run_file(text).reason.rfind("no whole-file digest", 0), 0u) << read_run_file(text).reason;
  const fs::path empty = dir_ / "runs" / "empty.h5";
  std::ofstream{empty};
  EXPECT_EQ(read_run_file(empty).reason, "cannot open: empty file");
  EXPECT_EQ(read_run_file(dir_ / "runs" / "absent.h5").reason, "missing");
}

const std::string kDigestMismatch = "checksum error: the file's SHA-256 differs from the digest written with it";

// A flipped byte is caught by the whole-file digest before HDF5 reads the file; behind the
// digest (a writer that stored damaged bytes), the chunk's Fletcher32 still catches it.
TEST_F(StoreTest, FlippedCurveByteIsAChecksumError) {
  const fs::path p = write(make_record("curveflip"));
  flip_byte(p, chunk_offset(p, "/curves/train_loss") + 100, 0xFF);
  const RunFileCheck c = read_run_file(p);
  EXPECT_FALSE(c.valid());
  EXPECT_EQ(c.reason.rfind(kDigestMismatch, 0), 0u) << c.reason;
  test::reseal(p);
  EXPECT_EQ(read_run_file(p).reason, "checksum error in /curves/train_loss");
}

TEST_F(StoreTest, FlippedMetricByteIsAChecksumError) {
  const fs::path p = write(make_record("metricflip"));
  flip_byte(p, chunk_offset(p, "/metrics/eval_accuracy") + 3, 0x01);
  EXPECT_EQ(read_run_file(p).reason.rfind(kDigestMismatch, 0), 0u) << read_run_file(p).reason;
  test::reseal(p);
  EXPECT_EQ(read_run_file(p).reason, "checksum error in /metrics/eval_accuracy");
}

TEST_F(StoreTest, FlippedSpecByteIsCaught) {
  const RunRecord r = make_record("specflip");
  const fs::path p = write(r);
  const std::string bytes = read_file(p);
  const std::string marker = "SPECMARK_specflip_END";
  const auto at = bytes.find(marker);
  ASSERT_NE(at, std::string::npos);
  ASSERT_EQ(bytes.find(marker, at + 1), std::string::npos);
  flip_byte(p, at + 9, 0x01);  // 's' -> 'r': still valid UTF-8 and JSON
  const RunFileCheck c = read_run_file(p);
  EXPECT_FALSE(c.valid());
  EXPECT_EQ(c.reason.rfind(kDigestMismatch, 0), 0u) << c.reason;
  test::reseal(p);
  EXPECT_EQ(read_run_file(p).reason, "checksum error in /spec");  // the text sits in a Fletcher32 chunk
}

TEST_F(StoreTest, TextNotMatchingItsSha256IsCaught) {
  const fs::path p = write(make_record("sha"));
  edit_root(p, [](hid_t f) {
    const hid_t d = H5Dopen2(f, "spec", H5P_DEFAULT);
    ASSERT_GE(d, 0);
    ASSERT_GE(H5Adelete(d, "sha256"), 0);
    h5::Dataset ds(d, "test");
    h5::write_string_attribute(ds, "sha256", std::string(64, '0'));
  });
  test::reseal(p);
  EXPECT_EQ(read_run_file(p).reason, "sha256 mismatch in /spec");
}

TEST_F(StoreTest, SpecNotMatchingTheKeyIsCaught) {
  const fs::path p = write(make_record("key"));
  edit_root(p, [](hid_t f) {
    h5::Group root(H5Gopen2(f, "/", H5P_DEFAULT), "test");
    h5::delete_attribute(root, "run_key");
    h5::write_string_attribute(root, "run_key", std::string(64, 'b'));
  });
  test::reseal(p);
  EXPECT_EQ(read_run_file(dir_ / "x.h5").reason, "missing");
  EXPECT_EQ(read_run_file(p).reason, "spec does not hash to the run key");
}

// Damage anywhere in a file is reported, never a crash and never different data: the
// whole-file digest is checked before HDF5 sees a byte (HDF5 1.10 segfaults in link
// iteration on some flipped bytes of a group's link storage, which no checksum covers).
// Every byte.
TEST_F(StoreTest, AnyFlippedByteIsCaught) {
  RunRecord r = make_record("fuzz", 0, RunStatus::Failed);
  r.records = {{"small", true}};
  r.curves["train_loss"].resize(50);
  r.curves["train_step"].resize(50);
  const fs::path p = write(r);
  const std::string orig = read_file(p);
  for (size_t off = 0; off < orig.size(); ++off) {
    std::string bytes = orig;
    bytes[off] = static_cast<char>(bytes[off] ^ 0x5A);
    std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
    const RunFileCheck c = read_run_file(p);
    ASSERT_FALSE(c.valid()) << "byte " << off << " flipped, read as valid";
  }
}

TEST_F(StoreTest, MissingMarkerIsIncomplete) {
  const fs::path p = write(make_record("incomplete"));
  edit_root(p, [](hid_t f) { ASSERT_GE(H5Adelete(f, "complete"), 0); });
  EXPECT_EQ(read_run_file(p).reason.rfind(kDigestMismatch, 0), 0u) << read_run_file(p).reason;
  test::reseal(p);
  EXPECT_EQ(read_run_file(p).reason, "incomplete: no complete marker");
}

TEST_F(StoreTest, UnknownSchemaVersionIsReported) {
  const fs::path p = write(make_record("schema"));
  edit_root(p, [](hid_t f) {
    set_schema_version(f, 7);
  });
  test::reseal(p);
  EXPECT_EQ(read_run_file(p).reason.rfind("unknown schema_version 7", 0), 0u) << read_run_file(p).reason;
}

// Schema 2: /figures holds each metric's unit and better side, from the figure catalogue.
TEST_F(StoreTest, EachFigureIsRecordedWithItsUnitAndDirection) {
  const fs::path p = write(make_record("figures"));
  const RunFileCheck c = read_run_file(p);
  ASSERT_TRUE(c.valid()) << c.reason;
  const auto& f = c.record->figures;
  ASSERT_EQ(f.size(), c.record->metrics.size());
  EXPECT_EQ(f.at("peak_bytes"), (RecordedFigure{"bytes", "lower"}));
  EXPECT_EQ(f.at("eval_accuracy"), (RecordedFigure{"", "higher"}));  // a task metric
  EXPECT_EQ(f.at("steps_done"), (RecordedFigure{"count", "none"}));
  EXPECT_EQ(f.at("grad_norm_max"), (RecordedFigure{"", "none"}));   // declared nowhere: no better side
  // The text any HDF5 reader sees (h5py: json.loads(f["figures"][()])).
  const json text = json::parse(read_text_dataset(h5::open_file(p), "figures", "/figures"));
  EXPECT_EQ(text.at("peak_bytes"), (json{{"unit", "bytes"}, {"direction", "lower"}}));
}

// A figure the catalogue does not know (a model built out of tree) is written as the record
// carries it, and a program reading the file learns it.
TEST_F(StoreTest, AFigureTheReaderDoesNotKnowIsLearntFromTheFile) {
  RunRecord r = make_record("learnt");
  r.metrics["lrb_store_test_out_of_tree_bytes"] = 4096;
  r.figures["lrb_store_test_out_of_tree_bytes"] = {"bytes", "lower"};
  EXPECT_EQ(find_figure("lrb_store_test_out_of_tree_bytes"), nullptr);
  const RunFileCheck c = read_run_file(write(r));
  ASSERT_TRUE(c.valid()) << c.reason;
  const FigureDef* f = find_figure("lrb_store_test_out_of_tree_bytes");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->direction, Direction::Lower);
  EXPECT_EQ(f->unit, FigureUnit::Bytes);
  EXPECT_EQ(f->recorded_by, "run file");
}

// Run files of schema 1 (no /figures) still read; their figures' directions are the catalogue's.
TEST_F(StoreTest, AVersionOneFileStillReads) {
  const RunRecord r = make_record("version1");
  const fs::path p = write(r);
  edit_root(p, [](hid_t f) {
    ASSERT_GE(H5Ldelete(f, "figures", H5P_DEFAULT), 0);
    set_schema_version(f, 1);
  });
  test::reseal(p);
  const RunFileCheck c = read_run_file(p);
  ASSERT_TRUE(c.valid()) << c.reason;
  expect_same(r, *c.record);
  EXPECT_TRUE(c.record->figures.empty());
  EXPECT_EQ(figure_direction("peak_bytes"), Direction::Lower);
}

// A /figures that is not an object of units and directions is damage, named.
TEST_F(StoreTest, ABadFiguresTextIsNamed) {
  const fs::path p = write(make_record("badfigures"));
  edit_root(p, [](hid_t f) {
    ASSERT_GE(H5Ldelete(f, "figures", H5P_DEFAULT), 0);
    const h5::Group root(H5Gopen2(f, "/", H5P_DEFAULT), "test");
    write_text_dataset(root, "figures", R"({"peak_bytes": {"unit": "bytes", "direction": "up"}})");
  });
  test::reseal(p);
  EXPECT_NE(read_run_file(p).reason.find("/figures: 'peak_bytes' needs a unit and a direction"), std::string::npos)
      << read_run_file(p).reason;
}

TEST_F(StoreTest, RenamedFileIsReported) {
  const RunRecord r = make_record("renamed");
  const fs::path p = write(r);
  const fs::path other = dir_ / "runs" / (std::string(64, 'a') + ".h5");
  fs::rename(p, other);
  const RunFileCheck c = read_run_file(other);
  EXPECT_FALSE(c.valid());
  EXPECT_EQ(c.reason.rfind("file name is not the run key", 0), 0u) << c.reason;
  // Outside a runs/ folder the name is free (a copy handed around, an export).
  const fs::path loose = dir_ / "some_run.h5";
  fs::copy_file(other, loose);
  EXPECT_TRUE(read_run_file(loose).valid());
}

TEST_F(StoreTest, ScanSeparatesGoodAndBadFiles) {
  std::vector<RunRecord> good;
  for (int s = 0; s < 3; ++s) good.push_back(make_record("scan", s, RunStatus::Ok));
  for (const auto& r : good) write(r);
  const fs::path truncated = write(make_record("scan_truncated"));
  fs::resize_file(truncated, fs::file_size(truncated) / 3);
  std::ofstream(dir_ / "runs" / "junk.h5") << "junk";
  std::ofstream(dir_ / "runs" / ("." + good[0].key + ".h5.tmp.host.1")) << "in progress";
  std::ofstream(dir_ / "runs" / "notes.txt") << "not a run";

  const ResultsScan scan = scan_runs(dir_);
  ASSERT_EQ(scan.runs.size(), 3u);
  std::sort(good.begin(), good.end(), [](const RunRecord& a, const RunRecord& b) { return a.key < b.key; });
  for (size_t i = 0; i < good.size(); ++i) expect_same(good[i], scan.runs[i]);
  ASSERT_EQ(scan.bad.size(), 2u);
  EXPECT_TRUE(std::is_sorted(scan.bad.begin(), scan.bad.end(),
                             [](const BadResult& a, const BadResult& b) { return a.file < b.file; }));
  for (const auto& b : scan.bad) {
    EXPECT_TRUE(b.file == truncated || b.file == dir_ / "runs" / "junk.h5") << b.file;
    EXPECT_EQ(b.reason.rfind(b.file == truncated ? "truncated: " : "no whole-file digest", 0), 0u) << b.reason;
  }
}

TEST_F(StoreTest, ClearsStaleTemporaries) {
  const RunRecord r = make_record("keep");
  write(r);
  const std::string me = host_name();
  const fs::path other_host = dir_ / "runs" / ".x.h5.tmp.some-other-host.example.org.123";
  const fs::path dead = dir_ / "runs" / (".y.h5.tmp." + me + ".999999999");
  const fs::path mine = dir_ / "runs" / (".z.h5.tmp." + me + "." + std::to_string(::getpid()));
  fs::create_directories(dir_ / "checkpoints" / "run1");
  const fs::path ckpt = dir_ / "checkpoints" / "run1" / (".ckpt.pt.tmp." + me + ".999999998");
  const fs::path ckpt_ok = dir_ / "checkpoints" / "run1" / "ckpt.pt";
  const fs::path sweep = dir_ / (".sweep.h5.tmp." + me + ".999999997");
  for (const auto& p : {other_host, dead, mine, ckpt, ckpt_ok, sweep}) std::ofstream(p) << "x";

  const auto removed = clear_stale_temporaries(dir_);
  std::vector<fs::path> expected{other_host, dead, ckpt, sweep};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(removed, expected);
  for (const auto& p : expected) EXPECT_FALSE(fs::exists(p)) << p;
  EXPECT_TRUE(fs::exists(mine));  // a live process of this host is still writing it
  EXPECT_TRUE(fs::exists(ckpt_ok));
  EXPECT_TRUE(read_run_file(ResultsLayout(dir_).run_file(r.key)).valid());
  EXPECT_TRUE(clear_stale_temporaries(dir_ / "nowhere").empty());
}

TEST_F(StoreTest, QuarantineKeepsTheFileAndItsReason) {
  const fs::path p = write(make_record("quarantine"));
  const std::string bytes = read_file(p);
  const fs::path q = quarantine_bad_file(dir_, p, "checksum error in /curves/train_loss");
  EXPECT_FALSE(fs::exists(p));
  EXPECT_EQ(q.parent_path(), dir_ / "quarantine");
  EXPECT_EQ(q.filename().string().rfind(p.filename().string() + ".", 0), 0u) << q;
  EXPECT_EQ(read_file(q), bytes);
  const std::string reason = read_file(q.string() + ".reason");
  EXPECT_NE(reason.find("checksum error in /curves/train_loss"), std::string::npos) << reason;
  EXPECT_NE(reason.find(p.string()), std::string::npos) << reason;
  // The same name again (within the same second) does not overwrite the first.
  std::ofstream(p) << "again";
  const fs::path q2 = quarantine_bad_file(dir_, p, "second");
  EXPECT_NE(q2, q);
  EXPECT_EQ(read_file(q), bytes);
  EXPECT_EQ(read_file(q2), "again");
}

// runs/ on a read-only mount of its own: the file cannot be renamed into quarantine/ (another
// mount) nor removed after the copy, and no copy may stay behind without its .reason. A child
// process makes the mounts in a namespace of its own, so nothing outside the test sees them.
TEST_F(StoreTest, AQuarantineThatCannotMoveTheFileLeavesNoCopy) {
  const fs::path p = write(make_record("read-only"));
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // 3: no mount namespace here (not root); 0: as expected; 1: a copy was left; 2: no error.
    if (::unshare(CLONE_NEWNS) != 0 || ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) ::_exit(3);
    const std::string runs = p.parent_path().string();
    if (::mount(runs.c_str(), runs.c_str(), nullptr, MS_BIND, nullptr) != 0 ||
        ::mount(nullptr, runs.c_str(), nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY, nullptr) != 0)
      ::_exit(3);
    try {
      quarantine_bad_file(dir_, p, "damaged");
      ::_exit(2);
    } catch (const EnvironmentError&) {
    }
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir_ / "quarantine", ec))
      if (e.path().extension() != ".reason") ::_exit(1);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 3) GTEST_SKIP() << "needs root for a mount namespace (CI runs as root)";
  EXPECT_EQ(WEXITSTATUS(status), 0) << (WEXITSTATUS(status) == 1 ? "a quarantine copy without its .reason was left"
                                                                    : "quarantining from a read-only runs/ did not fail");
  EXPECT_TRUE(fs::exists(p)) << "the run file stays where it was";
}

TEST_F(StoreTest, MergeThenReadSweepFile) {
  std::vector<RunRecord> good{make_record("merge", 0, RunStatus::Ok), make_record("merge", 1, RunStatus::Failed),
                              make_record("merge", 2, RunStatus::Stopped)};
  for (const auto& r : good) write(r);
  std::sort(good.begin(), good.end(), [](const RunRecord& a, const RunRecord& b) { return a.key < b.key; });
  const fs::path bad = write(make_record("merge_bad"));
  flip_byte(bad, chunk_offset(bad, "/curves/train_loss") + 8, 0x10);

  merge_results(dir_);
  EXPECT_EQ(names_in(dir_), (std::vector<std::string>{"runs", "sweep.h5"}));  // no temporary left
  ResultsScan sweep = read_sweep_file(ResultsLayout(dir_).merged());
  ASSERT_EQ(sweep.runs.size(), good.size());
  for (size_t i = 0; i < good.size(); ++i) expect_same(good[i], sweep.runs[i]);
  ASSERT_EQ(sweep.bad.size(), 1u);
  EXPECT_EQ(sweep.bad[0].file, bad);
  EXPECT_EQ(sweep.bad[0].reason.rfind(kDigestMismatch, 0), 0u) << sweep.bad[0].reason;

  // The index names each run's cell.
  const hid_t f = H5Fopen(ResultsLayout(dir_).merged().c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  h5::Group root(H5Gopen2(f, "/", H5P_DEFAULT), "sweep.h5");
  // /runs holds its links densely from the first run: a compact group grew at a cost linear
  // in its links per run, and its conversion at 4,096 runs took minutes (merge stalled).
  {
    h5::Group runs(H5Gopen2(f, "runs", H5P_DEFAULT), "sweep.h5");
    H5G_info_t info{};
    ASSERT_GE(H5Gget_info(runs.id(), &info), 0);
    EXPECT_EQ(info.storage_type, H5G_STORAGE_TYPE_DENSE);
    EXPECT_EQ(info.nlinks, 3u);
  }
  // Each run is its file's bytes, whole (its own digest inside): one dataset, not a copy
  // of its ~30 objects, so merge stays linear (100,000 runs: docs/benchmarks.md).
  for (const RunRecord& r : good) {
    h5::Dataset run = h5::open_dataset(root, "runs/" + r.key);
    const std::string expected = read_file(ResultsLayout(dir_).run_file(r.key));
    ASSERT_EQ(h5::dataset_dims(run), (std::vector<hsize_t>{expected.size()}));
    std::string stored(expected.size(), '\0');
    h5::read_array_dataset(run, H5T_NATIVE_UINT8, stored.data());
    EXPECT_TRUE(stored == expected) << r.key;
  }
  h5::Dataset ds = h5::open_dataset(root, "index");
  const json index = json::parse(h5::read_string_dataset(ds));
  ds.reset();
  root.reset();
  H5Fclose(f);
  EXPECT_EQ(index.at(good[0].key).at("model"), "transformer");
  EXPECT_EQ(index.at(good[0].key).at("task"), "listops");
  EXPECT_EQ(index.size(), 3u);

  // Without runs/, load_results falls back to sweep.h5.
  fs::remove_all(dir_ / "runs");
  sweep = load_results(dir_);
  ASSERT_EQ(sweep.runs.size(), good.size());
  expect_same(good[1], sweep.runs[1]);
}

// sweep.h5 is written to disk as it is built, under this process's temporary name: a
// symbolic link found at that name (left, or planted) is removed, never written through,
// and an earlier sweep.h5 stays whole until the new one is renamed over it.
TEST_F(StoreTest, MergeNeverWritesThroughALinkAtItsTemporaryName) {
  const RunRecord r = make_record("streamed");
  write(r);
  const fs::path elsewhere = dir_.parent_path() / (dir_.filename().string() + "-elsewhere");
  std::ofstream(elsewhere) << "not lrbench's";
  const fs::path merged = ResultsLayout(dir_).merged();
  fs::create_symlink(elsewhere, temp_path_for(merged));
  merge_results(dir_);
  EXPECT_EQ(read_file(elsewhere), "not lrbench's");
  EXPECT_EQ(names_in(dir_), (std::vector<std::string>{"runs", "sweep.h5"}));
  EXPECT_EQ(digest_problem(merged), "");
  ASSERT_EQ(read_sweep_file(merged).runs.size(), 1u);
  fs::remove(elsewhere);
}

TEST_F(StoreTest, CorruptRunInSweepFileIsNamed) {
  const RunRecord r = make_record("sweepflip");
  write(r);
  merge_results(dir_);
  const fs::path sweep = ResultsLayout(dir_).merged();
  flip_byte(sweep, chunk_offset(sweep, "/runs/" + r.key) + 1000, 0x80);
  // The whole file's digest fails first: nothing of it is read.
  try {
    read_sweep_file(sweep);
    FAIL() << "a damaged sweep.h5 was read";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("is damaged (" + kDigestMismatch), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("lrbench merge"), std::string::npos) << e.what();
  }
  // Behind the digest, the stored bytes' checksum, then each run is validated as a file is.
  test::reseal(sweep);
  const ResultsScan s = read_sweep_file(sweep);
  EXPECT_TRUE(s.runs.empty());
  ASSERT_EQ(s.bad.size(), 1u);
  EXPECT_EQ(s.bad[0].file, sweep);
  EXPECT_EQ(s.bad[0].reason, "/runs/" + r.key + ": checksum error in the stored bytes");
}

// A sweep.h5 written by hand: schema_version 1 holds each run as a group (a run file's root
// copied), 2 as the run file's bytes; `runs` maps each name to what it holds.
static void write_sweep_file(const fs::path& path, long long version,
                      const std::vector<std::pair<std::string, std::function<void(const h5::Group&, const std::string&)>>>& runs) {
  h5::MemoryFile file(path);
  {
    h5::Group root = h5::open_group(file.file(), "/");
    h5::write_int_attribute(root, "schema_version", version);
    h5::Group g = h5::create_group(root, "runs", h5::LinkStorage::Dense);
    for (const auto& [name, put] : runs) put(g, name);
    write_text_dataset(root, "bad", "[]");
    write_text_dataset(root, "index", "{}");
    h5::write_int_attribute(root, "complete", 1);
    g.reset();
    root.close();
  }
  h5::publish_memory_file(file, path);
}

TEST_F(StoreTest, ASweepFileOfEitherLayoutIsRead) {
  const RunRecord a = make_record("layout", 0), b = make_record("layout", 1);
  const fs::path sweep = ResultsLayout(dir_).merged();
  // schema_version 1 (lrbench before merge stored bytes): groups, read as before.
  write_sweep_file(sweep, 1, {{a.key, [&](const h5::Group& runs, const std::string& name) {
                                 write_run_group(h5::create_group(runs, name), a);
                               }}});
  ResultsScan s = read_sweep_file(sweep);
  ASSERT_EQ(s.runs.size(), 1u) << (s.bad.empty() ? "" : s.bad[0].reason);
  expect_same(a, s.runs[0]);

  // schema_version 2: each run's bytes carry the run file's own digest, checked behind the
  // sweep file's; bytes that are not a run file, a run under another key's name, and a
  // dataset of another shape are each named.
  const std::string good = read_file(write(a));
  std::string flipped = read_file(write(b));
  flipped[flipped.size() - 100] ^= 0x01;
  const auto bytes = [](std::string data) {
    return [data](const h5::Group& runs, const std::string& name) {
      h5::write_array_dataset(runs, name, H5T_STD_U8LE, H5T_NATIVE_UINT8, {data.size()}, data.data());
    };
  };
  const std::string other_name(64, 'f');
  write_sweep_file(sweep, 2,
                   {{a.key, bytes(good)},
                    {b.key, bytes(flipped)},
                    {other_name, bytes(good)},
                    {"text", [](const h5::Group& runs, const std::string& name) { write_text_dataset(runs, name, "x"); }}});
  s = read_sweep_file(sweep);
  ASSERT_EQ(s.runs.size(), 1u);
  expect_same(a, s.runs[0]);
  std::vector<std::string> reasons;
  for (const BadResult& bad : s.bad) reasons.push_back(bad.reason);
  std::sort(reasons.begin(), reasons.end());
  ASSERT_EQ(reasons.size(), 3u);
  EXPECT_EQ(reasons[0].rfind("/runs/" + b.key + ": " + kDigestMismatch, 0), 0u) << reasons[0];
  EXPECT_EQ(reasons[1], "/runs/" + other_name + ": name is not the run key (key " + a.key + ")");
  EXPECT_EQ(reasons[2], "/runs/text: not the bytes of a run file (a 1-D dataset of bytes)");

  // A version this lrbench does not know is a user error naming both it reads.
  write_sweep_file(sweep, 3, {});
  try {
    read_sweep_file(sweep);
    FAIL() << "schema_version 3 was read";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("has schema_version 3; this lrbench reads 1 and 2"), std::string::npos) << e.what();
  }
}

TEST_F(StoreTest, AFifoAFolderOrADeviceAmongTheRunFilesIsNamedNeverWaitedOn) {
  write(make_record("special", 0));
  const fs::path runs = ResultsLayout(dir_).runs();
  const fs::path fifo = runs / (std::string(64, 'a') + ".h5"), folder = runs / (std::string(64, 'b') + ".h5"),
                 device = runs / (std::string(64, 'c') + ".h5");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);  // no writer: an open without O_NONBLOCK would wait forever
  fs::create_directory(folder);
  fs::create_symlink("/dev/zero", device);  // endless bytes
  for (const fs::path& p : {fifo, folder, device}) EXPECT_EQ(read_run_file(p).reason, "not a regular file") << p;
  const MergeSummary merged = merge_results(dir_);
  EXPECT_EQ(merged.runs, 1u);
  ASSERT_EQ(merged.bad.size(), 3u);
  for (const BadResult& b : merged.bad) EXPECT_EQ(b.reason, "not a regular file") << b.file;
}

TEST_F(StoreTest, MissingResultsAreUserErrors) {
  fs::remove_all(dir_ / "runs");
  EXPECT_THROW(load_results(dir_), UserError);
  EXPECT_THROW(merge_results(dir_), UserError);
  std::ofstream(ResultsLayout(dir_).merged()) << "garbage";
  try {
    read_sweep_file(ResultsLayout(dir_).merged());
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("is damaged (no whole-file digest"), std::string::npos) << e.what();
  }
}

TEST_F(StoreTest, WritingIsFast) {
  // Reported, not asserted: times vary by machine (the target is a few ms per file).
  const int n = 20;
  std::vector<RunRecord> records;
  for (int i = 0; i < n; ++i) records.push_back(make_record("speed", i, RunStatus::Ok));
  const auto t0 = std::chrono::steady_clock::now();
  for (const auto& r : records) write(r);
  const auto t1 = std::chrono::steady_clock::now();
  for (const auto& r : records) ASSERT_TRUE(read_run_file(ResultsLayout(dir_).run_file(r.key)).valid());
  const auto t2 = std::chrono::steady_clock::now();
  const auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
  std::printf("[ timing ] write %.2f ms, read+validate %.2f ms per run file (%zu KiB)\n", ms(t1 - t0) / n,
              ms(t2 - t1) / n, static_cast<size_t>(fs::file_size(ResultsLayout(dir_).run_file(records[0].key)) / 1024));
}

TEST(StoreH5, ErrorsNameOperationFileProcessAndStack) {
  try {
    h5::open_file("/nonexistent/folder/x.h5");
    FAIL() << "no error";
  } catch (const h5::Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.operation(), "H5Fopen");
    EXPECT_NE(what.find("/nonexistent/folder/x.h5"), std::string::npos) << what;
    EXPECT_NE(what.find(process_label()), std::string::npos) << what;
    EXPECT_FALSE(e.stack().empty());
    EXPECT_NE(what.find("H5Fopen"), std::string::npos) << what;
  }
}

TEST(StoreProcessInfo, RankComesFromTheLauncher) {
  const char* saved[3];
  const char* names[3] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID"};
  std::string values[3];
  for (int i = 0; i < 3; ++i) {
    saved[i] = std::getenv(names[i]);
    if (saved[i]) values[i] = saved[i];
    ::unsetenv(names[i]);
  }
  EXPECT_EQ(process_rank(), 0);
  ::setenv("SLURM_PROCID", "5", 1);
  EXPECT_EQ(process_rank(), 5);
  ::setenv("PMIX_RANK", "4", 1);
  EXPECT_EQ(process_rank(), 4);
  ::setenv("OMPI_COMM_WORLD_RANK", "3", 1);
  EXPECT_EQ(process_rank(), 3);
  EXPECT_EQ(process_label(), "host " + host_name() + " rank 3");
  ::setenv("OMPI_COMM_WORLD_RANK", "x", 1);
  EXPECT_EQ(process_rank(), 4);
  for (int i = 0; i < 3; ++i) {
    if (saved[i])
      ::setenv(names[i], values[i].c_str(), 1);
    else
      ::unsetenv(names[i]);
  }
}

}  // namespace
}  // namespace lrb
