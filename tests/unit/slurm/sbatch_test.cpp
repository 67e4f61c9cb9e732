// `lrbench slurm` without a cluster: values parsed and checked, scripts rendered from the
// templates, unsafe input refused before anything is written; run keys split into shards.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <tuple>

#include "suite/config/shard.h"
#include "suite/core/errors.h"
#include "suite/core/exit_codes.h"
#include "suite/core/sha256.h"
#include "suite/slurm/sbatch_script.h"
#include "suite/slurm/slurm_values.h"
#include "tests/support/subprocess.h"
#include "tests/support/sweeps.h"

namespace lrb {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

TEST(SbatchValues, TimeLimitsInEverySlurmForm) {
  EXPECT_EQ(parse_time_limit("90"), 90 * 60);
  EXPECT_EQ(parse_time_limit("5:30"), 5 * 60 + 30);
  EXPECT_EQ(parse_time_limit("2:00:00"), 7200);
  EXPECT_EQ(parse_time_limit("1-12"), 86400 + 12 * 3600);
  EXPECT_EQ(parse_time_limit("1-0:30"), 86400 + 1800);
  EXPECT_EQ(parse_time_limit("2-03:04:05"), 2 * 86400 + 3 * 3600 + 4 * 60 + 5);
  EXPECT_EQ(format_time_limit(2 * 86400 + 3 * 3600 + 4 * 60 + 5), "2-03:04:05");
  EXPECT_EQ(format_time_limit(600), "0-00:10:00");
  for (const char* bad : {"", "0", "-5", "1h", "10 ", "1:2:3:4", "1-2:3:4:5", "1-25", "5:60", "1:60:00", "INFINITE",
                          "$(reboot)", "10;rm", "999999999999", "400-00:00:00"})
    EXPECT_NE(error_of([&] { parse_time_limit(bad); }).find("--time"), std::string::npos) << bad;
}

TEST(SbatchValues, CountsAreWholeNumbersInRange) {
  EXPECT_EQ(parse_slurm_count("--nodes", "2", 1, 10), 2);
  for (const char* bad : {"", "0", "11", "2x", "-1", "+2", " 2", "1e3", "0x10", "99999999999"})
    EXPECT_NE(error_of([&] { parse_slurm_count("--nodes", bad, 1, 10); }).find("--nodes"), std::string::npos) << bad;
}

TEST(SbatchValues, ArraysAreACountOrARangeWithAnOptionalLimit) {
  ArraySpec a = parse_array("0-2%2");
  EXPECT_EQ(a.first, 0);
  EXPECT_EQ(a.last, 2);
  EXPECT_EQ(a.max_running, 2);
  EXPECT_EQ(a.count(), 3);
  EXPECT_EQ(a.text(), "0-2%2");
  a = parse_array("4");
  EXPECT_EQ(a.text(), "0-3");
  EXPECT_EQ(parse_array("5-9").count(), 5);
  for (const char* bad : {"", "0", "2-1", "1,3,5", "0-2%0", "0-2%", "%2", "a-b", "0-2:2", "0-4000001", "1-2%2;ls"})
    EXPECT_NE(error_of([&] { parse_array(bad); }).find("--array"), std::string::npos) << bad;
}

TEST(SbatchValues, NamesAndPathsAreRestrictedToSafeCharacters) {
  EXPECT_NO_THROW(check_slurm_name("--partition", "gpu-a100.short_1"));
  for (const char* bad : {"", "a b", "a;b", "a$b", "a'b", "a\nb", "a%b", "a/b", "é"})
    EXPECT_NE(error_of([&] { check_slurm_name("--partition", bad); }).find("--partition"), std::string::npos) << bad;
  EXPECT_FALSE(is_slurm_name(std::string(65, 'a')));
  EXPECT_TRUE(is_script_safe_path("/work/results/run-1+x/a.b_c"));
  for (const char* bad : {"relative/path", "/a b", "/a'b", "/a$(x)", "/a%j", "/a\"b", "/a;b", "/a\nb", "/a`b`", "/a\\b", "/~x"})
    EXPECT_FALSE(is_script_safe_path(bad)) << bad;
}

SbatchJob example_job() {
  SbatchJob j;
  j.name = "tiny";
  j.lrbench = "/opt/lrbench/bin/lrbench";
  j.spec = "/data/res/slurm/tiny-0123456789ab.toml";
  j.out = "/data/res";
  j.script = "/data/res/slurm/tiny.sbatch";
  j.array_script = j.script;
  j.ntasks_per_node = 2;
  j.time_seconds = 3600;
  j.signal_lead_seconds = 90;
  return j;
}

TEST(SbatchScript, MpiModeForwardsTheWarningAndRequeues) {
  SbatchJob j = example_job();
  j.gpus_per_task = 1;
  j.partition = "gpu";
  j.account = "proj-1";
  const std::string s = render_sweep_script(j);
  for (const char* line : {"#SBATCH --job-name=lrb-tiny\n", "#SBATCH --nodes=1\n", "#SBATCH --ntasks-per-node=2\n",
                           "#SBATCH --ntasks=2\n", "#SBATCH --gpus-per-task=1\n", "#SBATCH --time=0-01:00:00\n",
                           "#SBATCH --partition=gpu\n", "#SBATCH --account=proj-1\n", "#SBATCH --signal=B:USR1@90\n",
                           "#SBATCH --requeue\n", "#SBATCH --open-mode=append\n",
                           "#SBATCH --output=/data/res/slurm/tiny-%j.log\n", "LRBENCH='/opt/lrbench/bin/lrbench'\n",
                           "SPEC='/data/res/slurm/tiny-0123456789ab.toml'\n", "OUT='/data/res'\n", "SHARD_ARGS=()\n",
                           "srun --mpi=pmix --cpus-per-task=1 --gpus-per-task=1 \"$LRBENCH\" run \"$SPEC\" --out \"$OUT\"",
                           "trap 'forward USR1' USR1\n", "trap 'forward TERM' TERM\n", "scontrol requeue \"$SLURM_JOB_ID\""})
    EXPECT_NE(s.find(line), std::string::npos) << line << "\n" << s;
  EXPECT_EQ(s.find("--array"), std::string::npos);
  // Every #SBATCH line comes before the first command, or sbatch ignores it.
  EXPECT_LT(s.rfind("#SBATCH"), s.find("set -u"));
}

TEST(SbatchScript, ArrayModeRunsOneShardPerTaskAndTheFinalJobReports) {
  SbatchJob j = example_job();
  j.array = parse_array("3-5%2");
  j.script = "/data/res/slurm/tiny-array.sbatch";
  j.array_script = j.script;
  const std::string s = render_sweep_script(j);
  EXPECT_NE(s.find("#SBATCH --array=3-5%2\n"), std::string::npos) << s;
  EXPECT_NE(s.find("#SBATCH --output=/data/res/slurm/tiny-%A_%a.log\n"), std::string::npos) << s;
  EXPECT_NE(s.find("SHARD_ARGS=(--shard \"$((SLURM_ARRAY_TASK_ID - 3))/3\")"), std::string::npos) << s;
  EXPECT_EQ(s.find("--gpus-per-task"), std::string::npos);

  SbatchJob f = j;
  f.script = "/data/res/slurm/tiny-final.sbatch";
  const std::string fin = render_final_script(f);
  for (const char* line : {"#SBATCH --job-name=lrb-tiny-final\n", "#SBATCH --ntasks=1\n", "\"$LRBENCH\" merge \"$OUT\"",
                           "\"$LRBENCH\" report \"$OUT\" -o \"$OUT/report.txt\"", "ARRAY_SCRIPT='/data/res/slurm/tiny-array.sbatch'"})
    EXPECT_NE(fin.find(line), std::string::npos) << line << "\n" << fin;
  EXPECT_EQ(fin.find("#SBATCH --array"), std::string::npos);
  EXPECT_EQ(fin.find("#SBATCH --requeue"), std::string::npos);
}

TEST(SbatchScript, UncheckedValuesNeverReachTheScript) {
  auto with = [](auto change) {
    SbatchJob j = example_job();
    change(j);
    return error_of([&] { render_sweep_script(j); });
  };
  EXPECT_NE(with([](SbatchJob& j) { j.name = "x'; reboot; '"; }).find("name"), std::string::npos);
  EXPECT_NE(with([](SbatchJob& j) { j.out = "/data/my results"; }).find("results folder"), std::string::npos);
  EXPECT_NE(with([](SbatchJob& j) { j.spec = "/data/$(id).toml"; }).find("sweep file"), std::string::npos);
  EXPECT_NE(with([](SbatchJob& j) { j.lrbench = "/opt/%x/lrbench"; }).find("lrbench binary"), std::string::npos);
  EXPECT_NE(with([](SbatchJob& j) { j.partition = "gpu\n#SBATCH --uid=0"; }).find("--partition"), std::string::npos);
  EXPECT_NE(with([](SbatchJob& j) { j.account = "a b"; }).find("--account"), std::string::npos);
  EXPECT_NE(with([](SbatchJob& j) { j.signal_lead_seconds = 3600; }).find("--signal-lead"), std::string::npos);
  EXPECT_NE(with([](SbatchJob& j) { j.signal_lead_seconds = 70000; }).find("--signal-lead"), std::string::npos);
}

TEST(SbatchScript, GeneratedScriptsAreValidBash) {
  TempDir t;
  SbatchJob j = example_job();
  test::write_text(t / "mpi.sbatch", render_sweep_script(j));
  j.array = parse_array("0-2%2");
  test::write_text(t / "array.sbatch", render_sweep_script(j));
  test::write_text(t / "final.sbatch", render_final_script(j));
  for (const char* f : {"mpi.sbatch", "array.sbatch", "final.sbatch"}) {
    auto r = test::run({"bash", "-n", (t / f).string()});
    EXPECT_EQ(r.code, 0) << f << ": " << r.output;
  }
}

// The requeue policy of the sweep script, with stand-ins for lrbench, srun and scontrol
// (no cluster): requeue while runs remain and attempts progress, never after a failure,
// and give up after 3 attempts in a row without progress.
class SbatchRequeue : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(t_ / "bin");
    fs::create_directories(t_ / "out" / "slurm");
    fake("lrbench", "[ \"$1\" = status ] || exit 9\ncat \"$FAKE_DIR/status\"\n");
    fake("srun", "echo \"srun $*\" >>\"$FAKE_DIR/calls\"\n"
                 "[ -f \"$FAKE_DIR/status.after\" ] && cp \"$FAKE_DIR/status.after\" \"$FAKE_DIR/status\"\n"
                 "exit $(cat \"$FAKE_DIR/srun_rc\")\n");
    fake("scontrol", "echo \"scontrol $*\" >>\"$FAKE_DIR/calls\"\n");
    SbatchJob j = example_job();
    j.lrbench = t_ / "bin" / "lrbench";
    j.out = t_ / "out";
    j.spec = t_ / "out" / "slurm" / "tiny.toml";
    j.script = t_ / "out" / "slurm" / "tiny.sbatch";
    test::write_text(j.script, render_sweep_script(j));
    script_ = j.script;
  }
  void fake(const std::string& name, const std::string& body) {
    test::write_text(t_ / "bin" / name, "#!/bin/bash\n" + body);
    fs::permissions(t_ / "bin" / name, fs::perms::owner_all);
  }
  // One attempt: the status before, after (if srun changes it), srun's exit code.
  test::Result attempt(int restart, const std::string& before, const std::string& after, int srun_rc) {
    test::write_text(t_ / "status", before + "\n");
    fs::remove(t_ / "status.after");
    if (!after.empty()) test::write_text(t_ / "status.after", after + "\n");
    test::write_text(t_ / "srun_rc", std::to_string(srun_rc));
    fs::remove(t_ / "calls");
    return test::run({"bash", script_.string()}, std::chrono::seconds(60),
                     {"PATH=" + (t_ / "bin").string() + ":" + std::getenv("PATH"), "FAKE_DIR=" + t_.path().string(),
                      "SLURM_JOB_ID=42", "SLURM_RESTART_COUNT=" + std::to_string(restart)});
  }
  std::string calls() {
    std::ifstream in(t_ / "calls");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  TempDir t_;
  fs::path script_;
};

const char* kStopped = "total=2 finished=0 ok=0 failed=0 stopped=2 steps=300 missing=0 remaining=2";

TEST_F(SbatchRequeue, RequeuesWhileRunsRemainAndGivesUpAfterThreeAttemptsWithoutProgress) {
  for (int restart = 0; restart < 3; ++restart) {
    auto r = attempt(restart, kStopped, "", 3);
    if (restart < 2) {
      EXPECT_EQ(r.code, 0) << r.output;
      EXPECT_NE(r.output.find("requeueing: 2 run(s) left"), std::string::npos) << r.output;
      EXPECT_NE(calls().find("scontrol requeue 42"), std::string::npos) << calls();
    } else {
      EXPECT_EQ(r.code, 3) << r.output;
      EXPECT_NE(r.output.find("attempt 3: no progress in 3 attempts in a row: not requeueing"), std::string::npos) << r.output;
      EXPECT_EQ(calls().find("scontrol"), std::string::npos) << calls();
    }
    EXPECT_NE(calls().find("srun --mpi=pmix --cpus-per-task=1 " + (t_ / "bin" / "lrbench").string() + " run "),
              std::string::npos) << calls();
  }
  // Progress (any change of the status line) resets the count.
  auto r = attempt(3, kStopped, "total=2 finished=1 ok=1 failed=0 stopped=1 steps=150 missing=0 remaining=1", 3);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("requeueing: 1 run(s) left"), std::string::npos) << r.output;
  std::ifstream counter(t_ / "out" / "slurm" / "no-progress.42");
  int n = -1;
  counter >> n;
  EXPECT_EQ(n, 0);
}

TEST_F(SbatchRequeue, NoRequeueWhenDoneFailedOrNothingRemains) {
  const std::string done = "total=2 finished=2 ok=2 failed=0 stopped=0 steps=0 missing=0 remaining=0";
  auto r = attempt(0, kStopped, done, 0);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("attempt 1: done"), std::string::npos) << r.output;
  r = attempt(0, kStopped, "", 4);
  EXPECT_EQ(r.code, 4) << r.output;
  r = attempt(0, kStopped, "", 1);
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("not requeueing: the step failed (code 1)"), std::string::npos) << r.output;
  r = attempt(0, kStopped, done, 3);  // stopped, but at the very end
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(calls().find("scontrol"), std::string::npos) << calls();
}

TEST(SbatchCommand, WritesTheScriptAndPrintsItsPath) {
  TempDir t;
  test::write_text(t / "sweep.toml", test::tiny_sweep());
  auto r = test::run({test::lrbench(), "slurm", (t / "sweep.toml").string(), "--out", (t / "out").string(), "--ntasks-per-node",
                      "2", "--time", "30", "--signal-lead", "60"});
  ASSERT_EQ(r.code, kExitDone) << r.output;
  const fs::path script = fs::canonical(t / "out") / "slurm" / "tiny.sbatch";
  EXPECT_EQ(r.output.substr(0, r.output.find('\n')), script.string()) << "the path comes first\n" << r.output;
  std::ifstream in(script);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_NE(ss.str().find("#SBATCH --signal=B:USR1@60"), std::string::npos);
  // The job runs a frozen copy of the sweep file, named by its content.
  const std::string copy = "tiny-" + sha256_hex(test::tiny_sweep()).substr(0, 12) + ".toml";
  EXPECT_TRUE(fs::exists(fs::canonical(t / "out") / "slurm" / copy)) << copy;
  EXPECT_NE(ss.str().find("/slurm/" + copy + "'"), std::string::npos);
}

TEST(SbatchCommand, DataParallelSweepsGetWholeGroupsOfTasks) {
  TempDir t;
  test::write_text(t / "sweep.toml", test::tiny_sweep(30, "ranks_per_run = 2\n"));
  auto script_of = [&](const std::vector<std::string>& flags) {
    std::vector<std::string> argv = {test::lrbench(), "slurm", (t / "sweep.toml").string(), "--out", (t / "out").string()};
    argv.insert(argv.end(), flags.begin(), flags.end());
    auto r = test::run(argv);
    EXPECT_EQ(r.code, kExitDone) << r.output;
    std::ifstream in(fs::canonical(t / "out") / "slurm" / "tiny.sbatch");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  // By default one run's group per node.
  std::string s = script_of({});
  EXPECT_NE(s.find("#SBATCH --ntasks-per-node=2\n"), std::string::npos) << s;
  EXPECT_NE(s.find("#SBATCH --ntasks=2\n"), std::string::npos) << s;
  s = script_of({"--nodes", "2", "--ntasks-per-node", "3"});
  EXPECT_NE(s.find("#SBATCH --ntasks=6\n"), std::string::npos) << s;
  auto r = test::run({test::lrbench(), "slurm", (t / "sweep.toml").string(), "--out", (t / "bad").string(), "--nodes", "3",
                      "--ntasks-per-node", "1"});
  EXPECT_EQ(r.code, kExitUsage) << r.output;
  EXPECT_NE(r.output.find("gives 3 task(s), not a multiple of 2"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(t / "bad"));
}

// --runs-per-gpu k: k tasks share each of the node's GPUs (asked for per node, seen by every
// task), as the sweep's runs_per_gpu allows; what cannot work is refused before anything is written.
TEST(SbatchCommand, SharedGpusAskForTheNodesGpusAndKTasksEach) {
  TempDir t;
  test::write_text(t / "shared.toml", test::tiny_sweep(30, "device = \"cuda\"\nruns_per_gpu = 4\n"));
  test::write_text(t / "alone.toml", test::tiny_sweep(30, "device = \"cuda\"\n"));
  test::write_text(t / "cpu.toml", test::tiny_sweep());
  const auto slurm = [&](const char* file, const char* out, const std::vector<std::string>& flags) {
    std::vector<std::string> argv = {test::lrbench(), "slurm", (t / file).string(), "--out", (t / out).string()};
    argv.insert(argv.end(), flags.begin(), flags.end());
    return test::run(argv);
  };
  auto r = slurm("shared.toml", "out", {"--runs-per-gpu", "4", "--gpus-per-node", "2"});
  ASSERT_EQ(r.code, kExitDone) << r.output;
  std::ifstream in(fs::canonical(t / "out") / "slurm" / "tiny.sbatch");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string s = ss.str();
  for (const char* line : {"#SBATCH --ntasks-per-node=8\n", "#SBATCH --gres=gpu:2\n", "srun --mpi=pmix --cpus-per-task=1 --gres=gpu:2 "})
    EXPECT_NE(s.find(line), std::string::npos) << line << "\n" << s;
  EXPECT_EQ(s.find("--gpus-per-task"), std::string::npos) << s;
  for (const auto& [file, flags, message] : std::vector<std::tuple<const char*, std::vector<std::string>, std::string>>{
           {"alone.toml", {"--runs-per-gpu", "4"}, "the sweep's runs_per_gpu is 1"},
           {"cpu.toml", {"--runs-per-gpu", "2"}, "the sweep runs on device = \"cpu\""},
           {"shared.toml", {"--runs-per-gpu", "4", "--gpus-per-task", "1"}, "leave out --gpus-per-task"},
           {"shared.toml", {"--runs-per-gpu", "4", "--ntasks-per-node", "5"}, "--ntasks-per-node 5 is more than --runs-per-gpu 4"},
           {"shared.toml", {"--runs-per-gpu", "0"}, "--runs-per-gpu"},
           {"shared.toml", {"--runs-per-gpu", "65"}, "--runs-per-gpu"}}) {
    r = slurm(file, "bad", flags);
    EXPECT_EQ(r.code, kExitUsage) << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(t / "bad"));
  }
}

TEST(SbatchCommand, TheFilesystemRootIsNoResultsFolder) {
  // `--out /` wrote /slurm/ without a word; `run --out /` would fill / with runs/ and locks.
  TempDir t;
  test::write_text(t / "sweep.toml", test::tiny_sweep());
  for (const char* root : {"/", "/..", "//"}) {
    for (const char* command : {"slurm", "run"}) {
      auto r = test::run({test::lrbench(), command, (t / "sweep.toml").string(), "--out", root});
      EXPECT_EQ(r.code, kExitUsage) << command << " " << root << ": " << r.output;
      EXPECT_NE(r.output.find("is the filesystem root"), std::string::npos) << r.output;
    }
  }
  EXPECT_FALSE(fs::exists("/slurm/tiny.sbatch"));
}

TEST(SbatchCommand, RefusesUnsafeOrMalformedValuesAndWritesNothing) {
  TempDir t;
  test::write_text(t / "sweep.toml", test::tiny_sweep());
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--partition", "gpu;reboot"}, "--partition 'gpu;reboot': a name may hold only"},
      {{"--account", "$(id)"}, "--account"},
      {{"--time", "1h"}, "--time '1h': give a time limit"},
      {{"--time", "1", "--signal-lead", "60"}, "is not shorter than --time"},
      {{"--nodes", "0"}, "--nodes '0': give a whole number from 1"},
      {{"--ntasks-per-node", "2abc"}, "--ntasks-per-node"},
      {{"--cpus-per-task", "-1"}, "--cpus-per-task"},
      {{"--gpus-per-task", "x"}, "--gpus-per-task"},
      {{"--array", "1,2,3"}, "--array '1,2,3'"},
      {{"--signal-lead", "0"}, "--signal-lead"},
  };
  for (const auto& [flags, message] : cases) {
    std::vector<std::string> argv = {test::lrbench(), "slurm", (t / "sweep.toml").string(), "--out", (t / "out").string()};
    argv.insert(argv.end(), flags.begin(), flags.end());
    auto r = test::run(argv);
    EXPECT_EQ(r.code, kExitUsage) << flags[0] << ": " << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(t / "out")) << flags[0] << " wrote something";
  }
  auto r = test::run({test::lrbench(), "slurm", (t / "sweep.toml").string(), "--out", (t / "my results").string()});
  EXPECT_EQ(r.code, kExitUsage) << r.output;
  EXPECT_NE(r.output.find("may hold only letters, digits and . _ + - /"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(t / "my results"));
  // A sweep that cannot run on its resources is refused too.
  std::string cuda = test::tiny_sweep();
  cuda.replace(cuda.find("threads = 1"), 11, "threads = 1\ndevice = \"cuda\"");
  test::write_text(t / "cuda.toml", cuda);
  r = test::run({test::lrbench(), "slurm", (t / "cuda.toml").string(), "--out", (t / "out").string()});
  EXPECT_EQ(r.code, kExitUsage) << r.output;
  EXPECT_NE(r.output.find("give --gpus-per-task 1"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(t / "out"));
}

TEST(ShardOf, KeysSplitEvenlyAndDeterministically) {
  std::vector<int> counts(3, 0);
  for (int i = 0; i < 3000; ++i) {
    const std::string key = sha256_hex(std::to_string(i));
    const int s = shard_of(key, 3);
    ASSERT_GE(s, 0);
    ASSERT_LT(s, 3);
    EXPECT_EQ(s, static_cast<int>(sha256_u64(std::to_string(i)) % 3));  // the key's first 8 bytes mod N
    ++counts[static_cast<std::size_t>(s)];
    int owners = 0;
    for (int j = 0; j < 3; ++j) owners += in_shard(key, Shard{j, 3});
    EXPECT_EQ(owners, 1);
  }
  for (int c : counts) EXPECT_NEAR(c, 1000, 150);
  EXPECT_TRUE(in_shard(sha256_hex("x"), Shard{}));
}

TEST(ShardOf, ShardArgumentsAreChecked) {
  const Shard s = parse_shard("2/5");
  EXPECT_EQ(s.index, 2);
  EXPECT_EQ(s.count, 5);
  EXPECT_EQ(s.text(), "2/5");
  for (const char* bad : {"", "1", "5/5", "-1/3", "1/0", "a/b", "1/3/4", " 1/3", "1/3 ", "1/9999999999"})
    EXPECT_NE(error_of([&] { parse_shard(bad); }).find("--shard"), std::string::npos) << bad;
}

}  // namespace
}  // namespace lrb
