// The lrbench binary against a hostile user and a failing machine: damaged files, device
// nodes and FIFOs as outputs, a full disk, signals at start-up, mismatched shards, two
// sweeps in one folder, data files with impossible values. Suites Slow* and Mpi*.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <ATen/ATen.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <thread>

#include "suite/core/exit_codes.h"
#include "suite/core/file_digest.h"
#include "suite/core/files.h"
#include "suite/hdf5/h5.h"
#include "suite/store/run_file.h"
#include "tests/support/damage.h"
#include "tests/support/report_runs.h"
#include "tests/support/results.h"
#include "tests/support/subprocess.h"
#include "tests/support/sweeps.h"

namespace lrb {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using test::Child;
using test::TempDir;

std::vector<std::string> run_cmd(const TempDir& t, const std::string& out = "out", const std::string& spec = "sweep.toml") {
  return {test::lrbench(), "run", (t / spec).string(), "--out", (t / out).string(), "--data-cache", "none"};
}

std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The command run by bash with a file size limit of `kib` KiB (a full disk, as far as
// writes go: they fail with EFBIG), SIGXFSZ ignored so that the failure is an error.
std::vector<std::string> with_file_limit(int kib, const std::vector<std::string>& argv) {
  std::vector<std::string> out = {"/bin/bash", "-c", "ulimit -f " + std::to_string(kib) + "; trap '' XFSZ; exec \"$@\"", "bash"};
  return concat(out, argv);
}

std::vector<std::string> temporaries_in(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (is_temp_name(e.path().filename().string())) out.push_back(e.path().string());
  return out;
}

// A sweep long enough to signal mid-run: one run of `steps` steps.
std::string one_long_run(int steps = 4000) {
  std::string spec = test::tiny_sweep(steps, "checkpoint_every = 25\n");
  spec.replace(spec.find("seeds = 2"), 9, "seeds = [1]");
  spec.replace(spec.find("[\"softmax\", \"linear\"]"), 21, "\"softmax\"");
  return spec;
}

bool wait_for_checkpoint(const fs::path& out) { return test::wait_for_checkpoint(out, 60s); }

TEST(SlowHardening, DamagedRunFilesNeverCrashAReader) {
  TempDir t;
  test::write_text(t / "sweep.toml", test::tiny_sweep(10));
  ASSERT_EQ(test::run(run_cmd(t)).code, kExitDone);
  // Bytes near the end of a file (a group's link storage: HDF5 crashed there) and in the
  // middle, one file each.
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(t / "out" / "runs")) files.push_back(e.path());
  ASSERT_EQ(files.size(), 4u);
  std::sort(files.begin(), files.end());
  for (std::size_t i = 0; i < 3; ++i) {
    const std::uint64_t size = fs::file_size(files[i]);
    const std::uint64_t offsets[] = {size - 8, size - 200, size * 3 / 8};
    test::flip_byte(files[i], offsets[i], 0x24);
  }

  auto status = test::run({test::lrbench(), "status", (t / "out").string()});
  EXPECT_EQ(status.code, kExitDone) << status.output;
  EXPECT_NE(status.output.find("ok=1"), std::string::npos) << status.output;
  EXPECT_NE(status.output.find("missing=3"), std::string::npos) << status.output;
  auto report = test::run({test::lrbench(), "report", (t / "out").string()});
  EXPECT_EQ(report.code, kExitDone) << report.output;
  EXPECT_NE(report.output.find("bad result file"), std::string::npos) << report.output;
  auto merged = test::run({test::lrbench(), "merge", (t / "out").string()});
  EXPECT_EQ(merged.code, kExitDone) << merged.output;
  EXPECT_NE(merged.output.find("1 run(s), 3 bad file(s)"), std::string::npos) << merged.output;
  // A damaged sweep.h5 is named, never read: exit 2 saying to merge again.
  fs::rename(t / "out" / "runs", t / "out" / "runs-aside");
  const fs::path sweep = t / "out" / "sweep.h5";
  test::flip_byte(sweep, fs::file_size(sweep) - 16, 0x01);
  auto damaged = test::run({test::lrbench(), "report", (t / "out").string()});
  EXPECT_EQ(damaged.code, kExitUsage) << damaged.output;
  EXPECT_NE(damaged.output.find("sweep.h5 is damaged (checksum error"), std::string::npos) << damaged.output;
  fs::rename(t / "out" / "runs-aside", t / "out" / "runs");
  // `run` quarantines every damaged file and computes it again.
  auto again = test::run(run_cmd(t));
  ASSERT_EQ(again.code, kExitDone) << again.output;
  EXPECT_NE(again.output.find("3 ran now"), std::string::npos) << again.output;
  EXPECT_EQ(test::read_runs(t / "out").size(), 4u);
}

TEST(SlowHardening, OutputsNeverReplaceDevicesFifosOrTheirInput) {
  TempDir t;
  test::write_text(t / "sweep.toml", test::tiny_sweep(5));
  ASSERT_EQ(test::run(run_cmd(t)).code, kExitDone);
  const fs::path fifo = t / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  auto r = test::run({test::lrbench(), "report", (t / "out").string(), "-o", fifo.string(), "--format", "md"});
  EXPECT_EQ(r.code, kExitUsage) << r.output;
  EXPECT_NE(r.output.find("is not a regular file"), std::string::npos) << r.output;
  struct ::stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  fs::create_directories(t / "folder");
  EXPECT_EQ(test::run({test::lrbench(), "report", (t / "out").string(), "-o", (t / "folder").string()}).code, kExitUsage);
  EXPECT_TRUE(fs::is_directory(t / "folder"));
  // "-" is standard output.
  auto out = test::run({test::lrbench(), "report", (t / "out").string(), "-o", "-", "--format", "csv"});
  EXPECT_EQ(out.code, kExitDone) << out.output;
  EXPECT_NE(out.output.find("transformer"), std::string::npos) << out.output;
  EXPECT_FALSE(fs::exists("-"));

  // attend: q, k, v in; --out a FIFO, the input itself, or standard output.
  {
    h5::File f = h5::create_file(t / "qkv.h5");
    for (const char* name : {"q", "k", "v"}) {
      const at::Tensor x = at::randn({1, 1, 4, 2});
      h5::write_array_dataset(f, name, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {1, 1, 4, 2}, x.data_ptr());
    }
  }
  const std::string in_sha = test::file_sha256(t / "qkv.h5");
  const std::vector<std::string> attend = {test::lrbench(), "attend", "--kernel", "softmax", "--in", (t / "qkv.h5").string()};
  auto to_fifo = test::run(concat(attend, {"--out", fifo.string()}));
  EXPECT_EQ(to_fifo.code, kExitUsage) << to_fifo.output;
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  auto onto_input = test::run(concat(attend, {"--out", (t / "." / "qkv.h5").string()}));
  EXPECT_EQ(onto_input.code, kExitUsage) << onto_input.output;
  EXPECT_NE(onto_input.output.find("is the input file"), std::string::npos) << onto_input.output;
  EXPECT_EQ(test::file_sha256(t / "qkv.h5"), in_sha);
  auto to_stdout = test::run({"/bin/bash", "-c", "\"$@\" > " + (t / "stdout.h5").string(), "bash", attend[0], attend[1],
                              attend[2], attend[3], attend[4], attend[5], "--out", "-"});
  EXPECT_EQ(to_stdout.code, kExitDone) << to_stdout.output;
  EXPECT_EQ(sealed_bytes_problem(read_file(t / "stdout.h5")), "");
}

// `-o` (and `--out`) never replaces a results folder's own files: the merged runs (in a
// folder without runs/ the only copy), a run file, the manifest, the study log. Refused
// with exit 2 naming the path, before anything is read; a report beside them is fine.
TEST(SlowHardening, OutputsNeverReplaceAResultsFoldersOwnFiles) {
  TempDir t;
  test::write_text(t / "sweep.toml", test::tiny_sweep(5));
  ASSERT_EQ(test::run(run_cmd(t)).code, kExitDone);
  ASSERT_EQ(test::run({test::lrbench(), "merge", (t / "out").string()}).code, kExitDone);
  fs::create_directories(t / "merged");
  fs::copy_file(t / "out" / "sweep.h5", t / "merged" / "sweep.h5");
  const fs::path run_file = fs::directory_iterator(t / "out" / "runs")->path();
  const std::vector<fs::path> own = {t / "out" / "sweep.h5", t / "out" / "sweep.json", run_file, t / "out" / "study.json",
                                     t / "out" / "runs" / "new.md", t / "merged" / "sweep.h5"};
  std::map<fs::path, std::string> before;
  for (const auto& f : own) before[f] = fs::exists(f) ? test::file_sha256(f) : "";
  const auto refused = [&](const std::vector<std::string>& argv, const fs::path& target) {
    const auto r = test::run(argv);
    EXPECT_EQ(r.code, kExitUsage) << r.output;
    EXPECT_NE(r.output.find(target.string()), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("never writes over a results folder's own files"), std::string::npos) << r.output;
  };
  for (const auto& target : own) {
    SCOPED_TRACE(target.string());
    const std::string dir = (target.parent_path().filename() == "runs" ? target.parent_path().parent_path() : target.parent_path()).string();
    refused({test::lrbench(), "report", dir, "--format", "md", "-o", target.string()}, target);
    refused({test::lrbench(), "export", dir, "--format", "csv", "-o", target.string()}, target);
    refused({test::lrbench(), "plan", dir, "--format", "md", "-o", target.string()}, target);
  }
  // No flag needed for the manifest: its name says JSON. Another results folder than the
  // one read is refused too.
  refused({test::lrbench(), "report", (t / "out").string(), "-o", (t / "out" / "sweep.json").string()}, t / "out" / "sweep.json");
  refused({test::lrbench(), "leaderboard", (t / "out").string(), "-o", (t / "merged" / "sweep.h5").string(), "--format", "md"},
          t / "merged" / "sweep.h5");
  refused({test::lrbench(), "attend", "--kernel", "softmax", "--in", run_file.string(), "--out", (t / "out" / "sweep.h5").string()},
          t / "out" / "sweep.h5");
  refused(run_cmd(t, "out/runs/nested"), t / "out" / "runs" / "nested");
  for (const auto& f : own) EXPECT_EQ(fs::exists(f) ? test::file_sha256(f) : "", before[f]) << f;
  // A report of one's own beside the folder's files (the Slurm final job writes DIR/report.md).
  const auto beside = test::run({test::lrbench(), "report", (t / "out").string(), "-o", (t / "out" / "report.md").string()});
  EXPECT_EQ(beside.code, kExitDone) << beside.output;
}

// A symbolic link at -o is refused, naming it: the file it leads to (anywhere) is never
// replaced through it. A file replaced in place keeps its mode: a private file stays private.
TEST(SlowHardening, OutputsNeverWriteThroughALinkAndKeepTheModeOfWhatTheyReplace) {
  TempDir t;
  test::write_text(t / "sweep.toml", test::tiny_sweep(5));
  ASSERT_EQ(test::run(run_cmd(t)).code, kExitDone);
  fs::create_directories(t / "elsewhere");
  test::write_text(t / "elsewhere" / "private.md", "old");
  fs::permissions(t / "elsewhere" / "private.md", fs::perms::owner_read | fs::perms::owner_write);
  fs::create_symlink(t / "elsewhere" / "private.md", t / "link.md");
  for (const std::string command : {"report", "export", "plan"}) {
    SCOPED_TRACE(command);
    const auto r = test::run({test::lrbench(), command, (t / "out").string(), "--format", command == "export" ? "csv" : "md",
                              "-o", (t / "link.md").string()});
    EXPECT_EQ(r.code, kExitUsage) << r.output;
    EXPECT_NE(r.output.find((t / "link.md").string() + " is a symbolic link"), std::string::npos) << r.output;
    EXPECT_TRUE(fs::is_symlink(t / "link.md"));
    EXPECT_EQ(read_file(t / "elsewhere" / "private.md"), "old");
  }
  for (const std::string command : {"report", "export"}) {
    SCOPED_TRACE(command);
    const fs::path file = t / "elsewhere" / "private.md";
    const auto r = test::run({test::lrbench(), command, (t / "out").string(), "--format", command == "export" ? "csv" : "md",
                              "-o", file.string()});
    EXPECT_EQ(r.code, kExitDone) << r.output;
    EXPECT_NE(read_file(file), "old");
    EXPECT_EQ(fs::status(file).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
    test::write_text(file, "old");
  }
}

// A folder whose run files are gone but merged (only sweep.h5, or runs/ missing some):
// status counts sweep.h5's runs as finished, and run puts them back as they were stored
// instead of training them again, so that report, status and run agree.
TEST(SlowHardening, AMergedFoldersRunsAreFinishedForStatusAndRun) {
  TempDir t;
  test::write_text(t / "sweep.toml", test::tiny_sweep(5));
  ASSERT_EQ(test::run(run_cmd(t)).code, kExitDone);
  ASSERT_EQ(test::run({test::lrbench(), "merge", (t / "out").string()}).code, kExitDone);
  std::map<std::string, std::string> stored;  // run file name -> sha256
  for (const auto& e : fs::directory_iterator(t / "out" / "runs")) stored[e.path().filename().string()] = test::file_sha256(e.path());
  ASSERT_EQ(stored.size(), 4u);
  fs::remove_all(t / "out" / "runs");
  fs::remove(t / "out" / "runs.index");

  const std::string spec = (t / "sweep.toml").string();
  for (const std::vector<std::string>& status : {std::vector<std::string>{test::lrbench(), "status", (t / "out").string()},
                                                 {test::lrbench(), "status", (t / "out").string(), "--spec", spec}}) {
    const auto s = test::run(status);
    EXPECT_EQ(s.code, kExitDone) << s.output;
    EXPECT_NE(s.output.find("total=4 finished=4 ok=4 failed=0 stopped=0 steps=0 missing=0 remaining=0"), std::string::npos)
        << s.output;
  }
  auto again = test::run(run_cmd(t));
  ASSERT_EQ(again.code, kExitDone) << again.output;
  EXPECT_NE(again.output.find("0 ran now"), std::string::npos) << again.output;
  EXPECT_NE(again.output.find("restored 4 finished run(s)"), std::string::npos) << again.output;
  for (const auto& [name, sha] : stored) EXPECT_EQ(test::file_sha256(t / "out" / "runs" / name), sha) << name;

  // runs/ there but one file gone: the same, for that run alone.
  fs::remove(t / "out" / "runs" / stored.begin()->first);
  auto one = test::run(run_cmd(t));
  ASSERT_EQ(one.code, kExitDone) << one.output;
  EXPECT_NE(one.output.find("0 ran now"), std::string::npos) << one.output;
  EXPECT_EQ(test::file_sha256(t / "out" / "runs" / stored.begin()->first), stored.begin()->second);

  // A damaged sweep.h5 stands in for nothing: status says so, run computes the run again.
  fs::remove(t / "out" / "runs" / stored.begin()->first);
  test::flip_byte(t / "out" / "sweep.h5", fs::file_size(t / "out" / "sweep.h5") - 16, 0x01);
  const auto damaged = test::run({test::lrbench(), "status", (t / "out").string()});
  EXPECT_EQ(damaged.code, kExitDone) << damaged.output;
  EXPECT_NE(damaged.output.find("missing=1"), std::string::npos) << damaged.output;
  EXPECT_NE(damaged.output.find("sweep.h5 is damaged"), std::string::npos) << damaged.output;
  auto rerun = test::run(run_cmd(t));
  ASSERT_EQ(rerun.code, kExitDone) << rerun.output;
  EXPECT_NE(rerun.output.find("1 ran now"), std::string::npos) << rerun.output;
}

// `status --spec` with another sweep's file would count all of it missing: refused.
TEST(SlowHardening, StatusOfAnotherSweepsFileIsRefused) {
  TempDir t;
  test::write_text(t / "sweep.toml", test::tiny_sweep(5));
  ASSERT_EQ(test::run(run_cmd(t)).code, kExitDone);
  std::string other = test::tiny_sweep(5);
  other.replace(other.find("name = \"tiny\""), 13, "name = \"other\"");
  test::write_text(t / "other.toml", other);
  const auto r = test::run({test::lrbench(), "status", (t / "out").string(), "--spec", (t / "other.toml").string()});
  EXPECT_EQ(r.code, kExitUsage) << r.output;
  EXPECT_NE(r.output.find("is the sweep 'other', but " + (t / "out").string() + " holds the results of the sweep 'tiny'"),
            std::string::npos)
      << r.output;
}

TEST(SlowHardening, AFullDiskFailsWithExitOneAndLeavesNothingHalfWritten) {
  TempDir t;
  test::write_text(t / "sweep.toml", test::tiny_sweep(5));
  // Run files do not fit in 8 KiB: every result fails to be stored.
  auto run = test::run(with_file_limit(8, run_cmd(t)));
  EXPECT_EQ(run.code, kExitInternal) << run.output;
  EXPECT_NE(run.output.find("could not store the result"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("File too large"), std::string::npos) << run.output;
  EXPECT_TRUE(temporaries_in(t / "out").empty()) << temporaries_in(t / "out")[0];
  EXPECT_TRUE(test::read_runs(t / "out").empty());
  // Not even the manifest fits: an environment failure (1), not a configuration error (2).
  auto manifest = test::run(with_file_limit(0, run_cmd(t, "nothing")));
  EXPECT_EQ(manifest.code, kExitInternal) << manifest.output;
  EXPECT_NE(manifest.output.find("sweep.json"), std::string::npos) << manifest.output;
  EXPECT_TRUE(temporaries_in(t / "nothing").empty());
  // With room again, the same command completes the sweep.
  ASSERT_EQ(test::run(run_cmd(t)).code, kExitDone);
  EXPECT_EQ(test::read_runs(t / "out").size(), 4u);

  auto merge = test::run(with_file_limit(8, {test::lrbench(), "merge", (t / "out").string()}));
  EXPECT_EQ(merge.code, kExitInternal) << merge.output;
  EXPECT_FALSE(fs::exists(t / "out" / "sweep.h5"));
  EXPECT_TRUE(temporaries_in(t / "out").empty());

  auto report = test::run(with_file_limit(1, {test::lrbench(), "report", (t / "out").string(), "-o", (t / "r.md").string()}));
  EXPECT_EQ(report.code, kExitInternal) << report.output;
  EXPECT_FALSE(fs::exists(t / "r.md"));
  EXPECT_TRUE(temporaries_in(t.path()).empty());
}

// sweep.h5 is streamed to disk as it is built: merge's peak memory stays far below the
// file it writes (built in memory it was at least the file's size, about 4 GB at 100,000
// runs), and what it writes is every run's bytes, sealed.
TEST(SlowHardening, MergeWritesTheSweepFileInBoundedMemory) {
  if (!fs::exists("/usr/bin/time")) GTEST_SKIP() << "GNU time measures peak memory (scripts/setup.sh installs it)";
  TempDir t;
  std::mt19937_64 noise(7);
  std::uniform_real_distribution<double> value(0.0, 1.0);
  std::vector<RunRecord> runs;
  for (int seed = 0; seed < 800; ++seed) {
    test::RunDraft d;
    d.seed = seed;
    d.metrics = {{"accuracy", value(noise)}};
    RunRecord r = test::make_run(d);
    std::vector<double> curve(32768);  // 256 KiB of values no filter shrinks
    for (double& v : curve) v = value(noise);
    r.curves["train_loss"] = std::move(curve);
    runs.push_back(std::move(r));
  }
  test::write_runs(t / "out", runs);
  runs.clear();
  const auto merge = test::run({"/usr/bin/time", "-f", "peak_kib %M", test::lrbench(), "merge", (t / "out").string()});
  ASSERT_EQ(merge.code, kExitDone) << merge.output;
  EXPECT_NE(merge.output.find("800 run(s), 0 bad file(s)"), std::string::npos) << merge.output;
  const auto at = merge.output.rfind("peak_kib ");
  ASSERT_NE(at, std::string::npos) << merge.output;
  const double peak_mib = std::stod(merge.output.substr(at + 9)) / 1024.0;
  const fs::path sweep = t / "out" / "sweep.h5";
  const double file_mib = static_cast<double>(fs::file_size(sweep)) / (1 << 20);
  ASSERT_GT(file_mib, 200.0);
  EXPECT_LT(peak_mib, file_mib / 2) << "merge's peak memory " << peak_mib << " MiB for a sweep.h5 of " << file_mib << " MiB";
  EXPECT_EQ(digest_problem(sweep), "");
  EXPECT_TRUE(temporaries_in(t / "out").empty());
}

TEST(SlowHardening, APeriodicCheckpointThatDoesNotFitIsSaidOnceAndTheRunCompletes) {
  TempDir t;
  // The run file (about 36 KiB after 400 steps) fits in 64 KiB; a checkpoint (about 130
  // KiB: weights and AdamW's two moments) does not. A full disk is not the run's result.
  test::write_text(t / "sweep.toml", one_long_run(400));
  auto run = test::run(with_file_limit(64, run_cmd(t)));
  ASSERT_EQ(run.code, kExitDone) << run.output;
  const std::string said = "a periodic checkpoint could not be written at step 25";
  ASSERT_NE(run.output.find(said), std::string::npos) << run.output;
  EXPECT_EQ(run.output.find(said), run.output.rfind("a periodic checkpoint could not be written")) << "said once\n" << run.output;
  EXPECT_NE(run.output.find("File too large"), std::string::npos) << run.output;
  const auto runs = test::read_runs(t / "out");
  ASSERT_EQ(runs.size(), 1u);
  const RunRecord& rec = runs.begin()->second;
  EXPECT_EQ(rec.status, RunStatus::Ok);
  EXPECT_EQ(rec.provenance.at("checkpoint_failed").at("step"), 25);
  EXPECT_TRUE(temporaries_in(t / "out").empty());
  // The same run with room for checkpoints gives the same numbers.
  ASSERT_EQ(test::run(run_cmd(t, "ref")).code, kExitDone);
  EXPECT_EQ(test::deterministic_difference(test::read_runs(t / "ref").begin()->second, rec), "");
}

// Waits until the child is lrbench and has its first instruction behind it: the stop
// signals blocked (the launcher) or caught (lrbench-core). Before that it is a copy of this
// test, or inside the exec system call, where no program can take a signal.
bool wait_until_started(pid_t pid) {
  const auto mask_has_sigterm = [](const std::string& line) {
    const unsigned long long bits = std::stoull(line.substr(line.find(':') + 1), nullptr, 16);
    return (bits >> (SIGTERM - 1)) & 1ULL;
  };
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  for (int i = 0; i < 20000; ++i) {
    std::error_code ec;
    const auto exe = fs::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec);
    if (!ec && exe.string() != self) {
      std::ifstream status("/proc/" + std::to_string(pid) + "/status");
      for (std::string line; std::getline(status, line);)
        if ((line.rfind("SigBlk:", 0) == 0 || line.rfind("SigCgt:", 0) == 0) && mask_has_sigterm(line)) return true;
    }
    std::this_thread::sleep_for(100us);
  }
  return false;
}

TEST(SlowHardening, StopSignalsDuringStartUpExitThree) {
  TempDir t;
  test::write_text(t / "sweep.toml", one_long_run());
  // From the launcher's first instruction on: while LibTorch loads, while MPI and the sweep
  // file are set up (SIGTERM used to exit 143 there, SIGUSR1 138).
  for (const auto delay : {0ms, 20ms, 150ms, 400ms}) {
    for (const int sig : {SIGTERM, SIGUSR1, SIGINT}) {
      SCOPED_TRACE(std::to_string(delay.count()) + " ms, signal " + std::to_string(sig));
      Child child(run_cmd(t, "out-" + std::to_string(delay.count()) + "-" + std::to_string(sig)));
      ASSERT_TRUE(wait_until_started(child.pid()));
      std::this_thread::sleep_for(delay);
      ::kill(child.pid(), sig);
      EXPECT_EQ(child.wait(120s), kExitStopped) << child.output();
    }
  }
}

TEST(SlowHardening, SigintCheckpointsLikeSigterm) {
  TempDir t;
  test::write_text(t / "sweep.toml", one_long_run(400));
  {
    Child child(run_cmd(t));
    ASSERT_TRUE(wait_for_checkpoint(t / "out"));
    child.signal(SIGINT);
    ASSERT_EQ(child.wait(120s), kExitStopped) << child.output();
  }
  const auto stopped = test::read_runs(t / "out");
  ASSERT_EQ(stopped.size(), 1u);
  EXPECT_EQ(stopped.begin()->second.status, RunStatus::Stopped);
  EXPECT_EQ(test::run(run_cmd(t)).code, kExitDone);
  EXPECT_EQ(test::read_runs(t / "out").begin()->second.status, RunStatus::Ok);
}

TEST(SlowHardening, ShardsOfDifferentCountsAreRefusedWhileOneRuns) {
  TempDir t;
  std::string spec = test::tiny_sweep(3000, "checkpoint_every = 25\n");
  spec.replace(spec.find("seeds = 2"), 9, "seeds = 4");
  test::write_text(t / "sweep.toml", spec);
  Child first(concat(run_cmd(t), {"--shard", "0/2"}));
  ASSERT_TRUE(wait_for_checkpoint(t / "out")) << first.output();
  auto other = test::run(concat(run_cmd(t), {"--shard", "0/3"}));
  EXPECT_EQ(other.code, kExitUsage) << other.output;
  EXPECT_NE(other.output.find("2-way split"), std::string::npos) << other.output;
  {
    Child same(concat(run_cmd(t), {"--shard", "1/2"}));  // the same split: welcome
    ASSERT_TRUE(same.wait_for_output("to do", 120s)) << same.output();
    same.signal(SIGTERM);
    EXPECT_EQ(same.wait(120s), kExitStopped) << same.output();
  }
  first.signal(SIGTERM);
  EXPECT_EQ(first.wait(120s), kExitStopped) << first.output();
  // With no shard at work, another count may start (what is finished is not run again).
  Child later(concat(run_cmd(t), {"--shard", "0/3"}));
  ASSERT_TRUE(later.wait_for_output("to do", 120s)) << later.output();
  later.signal(SIGTERM);
  EXPECT_EQ(later.wait(120s), kExitStopped) << later.output();
}

TEST(SlowHardening, OneFolderHoldsOneSweep) {
  TempDir t;
  test::write_text(t / "sweep.toml", test::tiny_sweep(5));
  std::string other = test::tiny_sweep(5);
  other.replace(other.find("name = \"tiny\""), 13, "name = \"other\"");
  other.replace(other.find("base_seed = 3"), 13, "base_seed = 4");  // other runs, other keys
  test::write_text(t / "other.toml", other);
  ASSERT_EQ(test::run(run_cmd(t)).code, kExitDone);
  auto refused = test::run(run_cmd(t, "out", "other.toml"));
  EXPECT_EQ(refused.code, kExitUsage) << refused.output;
  EXPECT_NE(refused.output.find("holds the results of sweep 'tiny'"), std::string::npos) << refused.output;
  // A folder mixed by hand (or by an older lrbench) is reported with a warning.
  ASSERT_EQ(test::run(run_cmd(t, "elsewhere", "other.toml")).code, kExitDone);
  for (const auto& e : fs::directory_iterator(t / "elsewhere" / "runs"))
    fs::copy_file(e.path(), t / "out" / "runs" / e.path().filename(), fs::copy_options::skip_existing);
  auto report = test::run({test::lrbench(), "report", (t / "out").string()});
  EXPECT_EQ(report.code, kExitDone) << report.output;
  EXPECT_NE(report.output.find("2 different sweeps (other, tiny)"), std::string::npos) << report.output;
  EXPECT_NE(report.output.find("are not runs of the sweep 'tiny'"), std::string::npos) << report.output;
}

TEST(SlowHardening, BadUserInputIsAConfigurationError) {
  TempDir t;
  auto zero = test::run({test::lrbench(), "validate", "/dev/zero"}, 60s);
  EXPECT_EQ(zero.code, kExitUsage) << zero.output;
  EXPECT_NE(zero.output.find("not a regular file"), std::string::npos) << zero.output;
  std::string empty = test::tiny_sweep(5);
  empty = "model = []\n" + empty.substr(0, empty.find("[[model]]"));
  test::write_text(t / "empty.toml", empty);
  EXPECT_EQ(test::run({test::lrbench(), "validate", (t / "empty.toml").string()}).code, kExitUsage);
  auto empty_run = test::run(run_cmd(t, "out", "empty.toml"));
  EXPECT_EQ(empty_run.code, kExitUsage) << empty_run.output;
  EXPECT_NE(empty_run.output.find("'model' is an empty list"), std::string::npos) << empty_run.output;

  // Token ids no vocabulary can hold: a user error at load time (exit 2), not an abort.
  {
    h5::File f = h5::create_file(t / "data.h5");
    at::Tensor x = at::arange(40, at::kLong).reshape({8, 5}) % 7;
    x[3][4] = std::numeric_limits<std::int64_t>::max();
    const at::Tensor y = at::arange(8, at::kLong) % 2;
    h5::write_array_dataset(f, "x", H5T_STD_I64LE, H5T_NATIVE_INT64, {8, 5}, x.data_ptr());
    h5::write_array_dataset(f, "y", H5T_STD_I64LE, H5T_NATIVE_INT64, {8}, y.data_ptr());
  }
  test::write_text(t / "data.toml", "[sweep]\nname = \"d\"\nseeds = 1\n[train]\nsteps = 2\nbatch_size = 2\neval_size = 1\n"
                                    "[[task]]\nname = \"hdf5-file\"\npath = \"" + (t / "data.h5").string() +
                                    "\"\neval_fraction = 0.25\n[[model]]\nname = \"transformer\"\ndim = 8\ndepth = 1\nheads = 2\n");
  auto data = test::run(run_cmd(t, "data-out", "data.toml"));
  EXPECT_EQ(data.code, kExitUsage) << data.output;
  EXPECT_NE(data.output.find("data.h5: /x[3, 4] = 9223372036854775807"), std::string::npos) << data.output;

  // A user's damaged HDF5 file is the user's to fix (2), not an internal error (1).
  test::write_text(t / "bad.h5", std::string("\x89HDF\r\n\x1a\n", 8) + std::string(600, 'z'));
  auto bad = test::run({test::lrbench(), "attend", "--kernel", "softmax", "--in", (t / "bad.h5").string(), "--out",
                        (t / "o.h5").string()});
  EXPECT_EQ(bad.code, kExitUsage) << bad.output;
  EXPECT_EQ(bad.output.find("internal error"), std::string::npos) << bad.output;
}

TEST(MpiHardening, SigtermToARanksLauncherCheckpointsEveryRankAndExitsThree) {
  TempDir t;
  std::string spec = test::tiny_sweep(4000, "checkpoint_every = 25\n");
  test::write_text(t / "sweep.toml", spec);
  Child job(concat(run_cmd(t), {"--ranks", "2", "--mpirun-flag=--oversubscribe", "--mpirun-flag=--bind-to",
                                "--mpirun-flag=none"}));
  ASSERT_TRUE(wait_for_checkpoint(t / "out")) << job.output();
  std::this_thread::sleep_for(1s);  // both ranks under way
  ::kill(job.pid(), SIGTERM);       // the launcher alone, as a scheduler or a user would
  EXPECT_EQ(job.wait(180s), kExitStopped) << job.output();
  int stopped = 0;
  for (const auto& [key, rec] : test::read_runs(t / "out")) stopped += rec.status == RunStatus::Stopped;
  EXPECT_EQ(stopped, 2) << job.output();
}

// A stop while `run --ranks 2` starts (the launcher, LibTorch loading, mpirun starting its
// ranks, the ranks loading) reaches every rank: exit 3, never a sweep run to its end (the
// stop used to be lost in about the first half second) nor a rank killed by the signal.
TEST(MpiHardening, AStopWhileTheRanksStartExitsThree) {
  TempDir t;
  test::write_text(t / "sweep.toml", test::tiny_sweep(4000, "checkpoint_every = 25\n"));
  const std::pair<std::chrono::milliseconds, int> trials[] = {
      {0ms, SIGTERM}, {150ms, SIGUSR1}, {300ms, SIGINT}, {500ms, SIGTERM}, {800ms, SIGUSR1}, {1200ms, SIGTERM}};
  for (const auto& [delay, sig] : trials) {
    SCOPED_TRACE(std::to_string(delay.count()) + " ms, signal " + std::to_string(sig));
    const std::string out = "out-" + std::to_string(delay.count());
    Child job(concat(run_cmd(t, out), {"--ranks", "2", "--mpirun-flag=--oversubscribe", "--mpirun-flag=--bind-to",
                                       "--mpirun-flag=none"}));
    ASSERT_TRUE(wait_until_started(job.pid()));
    std::this_thread::sleep_for(delay);
    ::kill(job.pid(), sig);
    EXPECT_EQ(job.wait(180s), kExitStopped) << job.output();
    for (const auto& [key, rec] : test::read_runs(t / out)) EXPECT_EQ(rec.status, RunStatus::Stopped) << key;
  }
}

}  // namespace
}  // namespace lrb
