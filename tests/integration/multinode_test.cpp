// Across nodes, on the emulated cluster of slurm/multinode_cluster.sh (label multinode;
// scripts/test.sh starts it): three nodes on this machine, each a network namespace with its
// own hostname, slurmd, CPUs (2, 2, 4) and emulated GPUs (2, 2, 1). What must hold when a
// job spans nodes: the transport between ranks, the GPU each task drives, a sweep over three
// nodes, a data-parallel group spanning two, an array whose tasks land on different nodes.
// Without the cluster every test fails, saying how to start it.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "suite/core/exit_codes.h"
#include "tests/support/results.h"
#include "tests/support/slurm_cluster.h"
#include "tests/support/subprocess.h"
#include "tests/support/sweeps.h"

namespace lrb {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using test::TempDir;

using test::read_text;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) out.push_back(l);
  return out;
}

class MultinodeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string problem = test::use_multinode_cluster();
    ASSERT_EQ(problem, "") << problem;
  }

  // `lrbench slurm SPEC --out OUT FLAGS... --submit`: the job ids it printed.
  std::vector<std::string> submit(const fs::path& spec, const fs::path& out, std::vector<std::string> flags) {
    std::vector<std::string> argv = {test::lrbench(), "slurm", spec.string(), "--out", out.string()};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.push_back("--submit");
    auto r = test::run(argv, 60s);
    EXPECT_EQ(r.code, kExitDone) << r.output;
    std::vector<std::string> ids;
    for (int i = 0; !test::job_id_in(r.output, i).empty(); ++i) {
      ids.push_back(test::job_id_in(r.output, i));
      guard_.add(ids.back());
    }
    EXPECT_FALSE(ids.empty()) << r.output;
    return ids;
  }

  test::JobGuard guard_;
};

// The ranks of different nodes share no memory: their messages go over TCP between the
// nodes' addresses; ranks of one node use shared memory. Observed per pair by the probe
// (the shared-memory segments each rank mapped, the TCP connections it holds).
TEST_F(MultinodeTest, RanksTalkTcpAcrossNodesAndSharedMemoryWithinOne) {
  auto r = test::run({"srun", "--nodes=2", "--ntasks-per-node=2", LRB_TRANSPORT_PROBE}, 120s);
  ASSERT_EQ(r.code, 0) << r.output;
  const std::regex pair("pair (\\d+) (\\d+) hosts (\\S+) (\\S+) shm (yes|no) tcp (yes|no)");
  int across = 0, within = 0;
  for (const auto& line : lines_of(r.output)) {
    std::smatch m;
    if (!std::regex_match(line, m, pair)) continue;
    if (m[3] != m[4]) {
      ++across;
      EXPECT_EQ(m[5], "no") << line << ": ranks on different nodes must not share memory";
      EXPECT_EQ(m[6], "yes") << line << ": ranks on different nodes talk TCP";
    } else {
      ++within;
      EXPECT_EQ(m[5], "yes") << line << ": ranks of one node share memory";
      EXPECT_EQ(m[6], "no") << line;
    }
  }
  EXPECT_EQ(across, 4) << r.output;
  EXPECT_EQ(within, 2) << r.output;
  EXPECT_NE(r.output.find("messages failed: 0"), std::string::npos) << r.output;
}

struct Binding {
  std::string host, visible, physical;
  int local = -1, device = -1;
};

// lrbench's GPU binding (bind_gpu) in every task of an srun, on the emulated GPUs.
std::vector<Binding> bindings(const std::vector<std::string>& srun_args, std::string& output) {
  std::vector<std::string> argv = {"srun"};
  argv.insert(argv.end(), srun_args.begin(), srun_args.end());
  argv.push_back(LRB_GPU_BINDING_PROBE);
  auto r = test::run(argv, 120s);
  output = r.output;
  EXPECT_EQ(r.code, 0) << r.output;
  std::vector<Binding> out;
  const std::regex line_re("host (\\S+) local (\\d+) of \\d+ visible (\\S+) device (\\d+) physical (\\S+) reason .*");
  for (const auto& line : lines_of(r.output)) {
    std::smatch m;
    if (std::regex_match(line, m, line_re)) out.push_back({m[1], m[3], m[5], std::stoi(m[2]), std::stoi(m[4])});
  }
  return out;
}

// Each task drives the GPU its node gives it, and no two tasks of a node share one: bound
// by Slurm (--gpus-per-task=1: each sees one device), or sharing the node's devices
// (--gres=gpu:2: each takes the one at its local rank). A node with fewer GPUs than tasks
// is refused.
TEST_F(MultinodeTest, EachTaskTakesItsOwnGpuOfItsNode) {
  std::string output;
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--nodes=2", "--ntasks-per-node=2", "--gpus-per-task=1"}, {"--nodes=2", "--ntasks-per-node=2", "--gres=gpu:2"}}) {
    const auto b = bindings(args, output);
    ASSERT_EQ(b.size(), 4u) << output;
    std::map<std::string, std::set<std::string>> physical_by_host;
    std::map<std::string, std::set<int>> locals_by_host;
    for (const auto& x : b) {
      physical_by_host[x.host].insert(x.physical);
      locals_by_host[x.host].insert(x.local);
      if (args.back() == "--gpus-per-task=1") {
        EXPECT_EQ(x.visible.find(','), std::string::npos) << output << ": Slurm bound one device to the task";
        EXPECT_EQ(x.device, 0) << output;
      } else {
        EXPECT_EQ(x.visible, "0,1") << output;
        EXPECT_EQ(x.device, x.local) << output << ": the device at the task's local rank";
      }
    }
    EXPECT_EQ(physical_by_host.size(), 2u) << output << ": tasks on two nodes";
    for (const auto& [host, ids] : physical_by_host) EXPECT_EQ(ids.size(), 2u) << host << " " << output << ": two tasks share a GPU";
    for (const auto& [host, locals] : locals_by_host) EXPECT_EQ(locals, (std::set<int>{0, 1})) << host << " " << output;
  }
  // n3 has one GPU, which Slurm makes visible to both tasks of a step on it: each alone
  // sees one device bound to it, so the job's start-up check, which compares every rank's
  // host and GPU, is what finds them sharing it (the job is then refused).
  const auto b = bindings({"--nodelist=n3", "--nodes=1", "--ntasks=2", "--gres=gpu:1"}, output);
  ASSERT_EQ(b.size(), 2u) << output;
  for (const auto& x : b) EXPECT_EQ(x.physical, "0") << output;
  EXPECT_NE(output.find("shared host n3 GPU gpu0: ranks 0, 1"), std::string::npos) << output;
  // Where each task has its own, nothing is shared.
  EXPECT_EQ(bindings({"--nodes=2", "--ntasks-per-node=2", "--gpus-per-task=1"}, output).size(), 4u);
  EXPECT_EQ(output.find("shared "), std::string::npos) << output;
}

// [sweep] runs_per_gpu = k: up to k tasks on one GPU pass the job's start-up check, k + 1 do
// not.
TEST_F(MultinodeTest, UpToRunsPerGpuTasksShareAGpu) {
  std::string output;
  setenv("LRB_PROBE_RUNS_PER_GPU", "3", 1);
  auto b = bindings({"--nodelist=n3", "--nodes=1", "--ntasks=3", "--gres=gpu:1"}, output);
  ASSERT_EQ(b.size(), 3u) << output;
  for (const auto& x : b) EXPECT_EQ(x.physical, "0") << output;
  EXPECT_EQ(output.find("shared "), std::string::npos) << output;
  setenv("LRB_PROBE_RUNS_PER_GPU", "2", 1);
  b = bindings({"--nodelist=n3", "--nodes=1", "--ntasks=3", "--gres=gpu:1"}, output);
  EXPECT_NE(output.find("shared host n3 GPU gpu0: ranks 0, 1, 2"), std::string::npos) << output;
  // Four tasks on n3's one GPU at k = 4 (n1 and n2 have 2 cores, too few for more tasks than
  // GPUs; the spread over several GPUs is GpuBinding.UpToRunsPerGpuRanksShareEachDevice's).
  setenv("LRB_PROBE_RUNS_PER_GPU", "4", 1);
  b = bindings({"--nodelist=n3", "--nodes=1", "--ntasks=4", "--gres=gpu:1"}, output);
  unsetenv("LRB_PROBE_RUNS_PER_GPU");
  ASSERT_EQ(b.size(), 4u) << output;
  for (const auto& x : b) EXPECT_EQ(x.physical, "0") << output;
  EXPECT_EQ(output.find("shared "), std::string::npos) << output;
}

// `lrbench slurm --nodes 3`: one rank per node, every run once, each bit-identical to the
// same sweep under mpirun on one node, and the ranks' runs spread over the three nodes.
TEST_F(MultinodeTest, ASweepOverThreeNodesRunsEveryRunOnceAsOneNodeMpirunDoes) {
  TempDir t;
  test::write_text(t / "sweep.toml", test::tiny_sweep());
  auto ref = test::run([&] {
    auto argv = test::mpirun(3);
    for (const std::string& a : {test::lrbench(), std::string("run"), (t / "sweep.toml").string(), std::string("--out"), (t / "ref").string()})
      argv.push_back(a);
    return argv;
  }());
  ASSERT_EQ(ref.code, kExitDone) << ref.output;
  const auto ids = submit(t / "sweep.toml", t / "out", {"--nodes", "3", "--ntasks-per-node", "1", "--time", "10"});
  ASSERT_EQ(ids.size(), 1u);
  const auto job = test::wait_job_ended(ids[0], 300s);
  const std::string log = read_text(t / "out" / "slurm" / ("tiny-" + ids[0] + ".log"));
  ASSERT_EQ(test::job_field(job, "JobState"), "COMPLETED") << log;
  EXPECT_EQ(test::job_field(job, "NodeList"), "n[1-3]") << log;

  const auto a = test::read_runs(t / "ref"), b = test::read_runs(t / "out");
  ASSERT_EQ(a.size(), 4u);
  ASSERT_EQ(b.size(), 4u) << log;
  std::set<std::string> hosts;
  for (const auto& [key, rec] : a) {
    ASSERT_TRUE(b.count(key)) << key;
    EXPECT_EQ(b.at(key).status, RunStatus::Ok) << key;
    EXPECT_EQ(test::deterministic_difference(rec, b.at(key)), "") << key;
    hosts.insert(b.at(key).provenance.at("host").get<std::string>());
    EXPECT_EQ(b.at(key).provenance.at("world_size"), 3);
  }
  EXPECT_EQ(hosts, (std::set<std::string>{"n1", "n2", "n3"})) << "every node's rank ran work";
  EXPECT_NE(log.find("finished=4 ok=4"), std::string::npos) << log;
}

// A data-parallel run whose two ranks are on two nodes (their gradient sums over TCP)
// trains bit-identically to the same group of two ranks on one node.
TEST_F(MultinodeTest, ADataParallelGroupSpanningTwoNodesTrainsAsOnOneNode) {
  TempDir t;
  std::string spec = test::tiny_sweep(30, "ranks_per_run = 2\n");
  spec.replace(spec.find("seeds = 2"), 9, "seeds = [1]");
  spec.replace(spec.find("[\"softmax\", \"linear\"]"), 21, "\"softmax\"\ndropout = 0.0");
  test::write_text(t / "sweep.toml", spec);
  auto argv = test::mpirun(2);
  for (const std::string& a : {test::lrbench(), std::string("run"), (t / "sweep.toml").string(), std::string("--out"), (t / "ref").string()})
    argv.push_back(a);
  auto ref = test::run(argv);
  ASSERT_EQ(ref.code, kExitDone) << ref.output;
  const auto ids = submit(t / "sweep.toml", t / "out", {"--nodes", "2", "--ntasks-per-node", "1", "--time", "10"});
  ASSERT_EQ(ids.size(), 1u);
  const auto job = test::wait_job_ended(ids[0], 300s);
  const std::string log = read_text(t / "out" / "slurm" / ("tiny-" + ids[0] + ".log"));
  ASSERT_EQ(test::job_field(job, "JobState"), "COMPLETED") << log;
  const auto a = test::read_runs(t / "ref"), b = test::read_runs(t / "out");
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 1u) << log;
  const auto& [key, rec] = *a.begin();
  ASSERT_TRUE(b.count(key));
  EXPECT_EQ(test::deterministic_difference(rec, b.at(key)), "");
  const auto& members = b.at(key).provenance.at("data_parallel").at("members");
  ASSERT_EQ(members.size(), 2u);
  EXPECT_NE(members[0].at("host"), members[1].at("host")) << "the group spans two nodes";
}

// An array of three shards, each task asking for two CPUs, so that they cannot all fit on
// one node: the tasks run on different nodes, every run once, and the final job reports.
TEST_F(MultinodeTest, AJobArrayWhoseTasksLandOnDifferentNodesCompletesWithItsFinalReport) {
  TempDir t;
  std::string spec = test::tiny_sweep();
  spec.replace(spec.find("seeds = 2"), 9, "seeds = 3");  // 6 runs over 3 shards
  test::write_text(t / "sweep.toml", spec);
  const auto ids = submit(t / "sweep.toml", t / "out", {"--array=0-2", "--cpus-per-task", "2", "--time", "10"});
  ASSERT_EQ(ids.size(), 2u) << "the array job and the final job";
  const auto final_job = test::wait_job_ended(ids[1], 420s);
  const std::string final_log = read_text(t / "out" / "slurm" / ("tiny-final-" + ids[1] + ".log"));
  ASSERT_EQ(test::job_field(final_job, "JobState"), "COMPLETED") << final_log;
  const auto array = test::show_job(ids[0]);
  ASSERT_EQ(array.size(), 3u);
  std::set<std::string> nodes;
  for (const auto& task : array) {
    EXPECT_EQ(task.at("JobState"), "COMPLETED");
    nodes.insert(task.at("NodeList"));
  }
  EXPECT_GE(nodes.size(), 2u) << "the array's tasks ran on different nodes";
  const auto runs = test::read_runs(t / "out");
  ASSERT_EQ(runs.size(), 6u);
  for (const auto& [key, rec] : runs) EXPECT_EQ(rec.status, RunStatus::Ok) << key;
  EXPECT_NE(final_log.find("total=6 finished=6"), std::string::npos) << final_log;
  EXPECT_NE(read_text(t / "out" / "report.txt").find("listops"), std::string::npos);
}

// The long sweep's reference, under mpirun on one node, computed once for the suite.
class MultinodeStop : public MultinodeTest {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    test::write_text(*dir_ / "sweep.toml", test::long_sweep());
    auto argv = test::mpirun(2);
    for (const std::string& a : {test::lrbench(), std::string("run"), (*dir_ / "sweep.toml").string(), std::string("--out"),
                                 (*dir_ / "ref").string()})
      argv.push_back(a);
    reference_ = test::run(argv);
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override {
    MultinodeTest::SetUp();
    ASSERT_EQ(reference_.code, kExitDone) << reference_.output;
  }
  // Every run of `out` finished once, Ok, bit-identical to the reference.
  static void expect_as_reference(const fs::path& out) {
    const auto a = test::read_runs(*dir_ / "ref"), b = test::read_runs(out);
    ASSERT_EQ(a.size(), 2u);
    ASSERT_EQ(b.size(), 2u);
    for (const auto& [key, rec] : a) {
      ASSERT_TRUE(b.count(key)) << key;
      EXPECT_EQ(b.at(key).status, RunStatus::Ok) << key;
      EXPECT_EQ(test::deterministic_difference(rec, b.at(key)), "") << key;
    }
  }
  static std::string cluster(const std::string& verb, const std::string& node) {
    auto r = test::run({"bash", std::string(LRB_SOURCE_DIR) + "/slurm/multinode_cluster.sh", verb, node}, 180s);
    return r.code == 0 ? "" : r.output;
  }

  static TempDir* dir_;
  static test::Result reference_;
};
TempDir* MultinodeStop::dir_ = nullptr;
test::Result MultinodeStop::reference_{-1, ""};

// Preemption across nodes: the USR1 warning reaches the ranks on every node, every run
// checkpoints, the job requeues, and its second attempt ends bit-identical to one that was
// never stopped.
TEST_F(MultinodeStop, Usr1ReachesEveryNodeCheckpointsRequeuesAndEndsBitIdentical) {
  TempDir t;
  test::write_text(t / "sweep.toml", test::long_sweep());
  const auto ids = submit(t / "sweep.toml", t / "out", {"--nodes", "3", "--ntasks-per-node", "1", "--time", "10"});
  ASSERT_EQ(ids.size(), 1u);
  const std::string id = ids[0];
  const auto log = [&] { return read_text(t / "out" / "slurm" / ("tiny-" + id + ".log")); };
  ASSERT_TRUE(test::wait_mid_run(t / "out", 2, 120s)) << log();
  ASSERT_EQ(test::run({"scancel", "--signal=USR1", id}).code, 0);
  ASSERT_TRUE(test::wait_requeued(id, 60s, 30s)) << log();
  const auto stopped = test::read_runs(t / "out");
  ASSERT_EQ(stopped.size(), 2u) << log();
  std::set<std::string> hosts;
  for (const auto& [key, rec] : stopped) {
    EXPECT_EQ(rec.status, RunStatus::Stopped) << key;
    EXPECT_TRUE(fs::exists(t / "out" / "checkpoints" / (key + ".pt"))) << key;
    hosts.insert(rec.provenance.at("host").get<std::string>());
  }
  EXPECT_EQ(hosts.size(), 2u) << "the two runs were on two nodes";
  const auto job = test::wait_job_ended(id, 300s);
  ASSERT_EQ(test::job_field(job, "JobState"), "COMPLETED") << log();
  EXPECT_NE(log().find("attempt 2: done"), std::string::npos) << log();
  expect_as_reference(t / "out");
  for (const auto& [key, rec] : test::read_runs(t / "out")) EXPECT_GT(rec.provenance.at("resumed_from_step").get<int>(), 0) << key;
}

// Node loss: a node training a run dies mid-job, with every process on it. Slurm requeues the job (the node
// failed); nothing finished is lost or counted twice and nothing half-written is counted;
// the job waits for its three nodes, and when the node comes back the second attempt resumes and
// ends bit-identical to a job that lost nothing.
TEST_F(MultinodeStop, ALostNodeLosesNothingAndTheJobCompletesWhenItComesBack) {
  TempDir t;
  test::write_text(t / "sweep.toml", test::long_sweep());
  const auto ids = submit(t / "sweep.toml", t / "out", {"--nodes", "3", "--ntasks-per-node", "1", "--time", "10"});
  ASSERT_EQ(ids.size(), 1u);
  const std::string id = ids[0];
  const auto log = [&] { return read_text(t / "out" / "slurm" / ("tiny-" + id + ".log")); };
  ASSERT_TRUE(test::wait_mid_run(t / "out", 2, 120s)) << log();
  // The node of a rank other than 0 (whose node also holds the batch script) that is
  // training: rank r is on node n(r+1), one task per node.
  std::smatch m;
  const std::string started = log();
  ASSERT_TRUE(std::regex_search(started, m, std::regex("rank ([12]) starts"))) << started;
  const std::string lost = "n" + std::to_string(std::stoi(m[1]) + 1);
  struct BringBack {
    std::string node;
    ~BringBack() { (void)cluster("start-node", node); }
  } bring_back{lost};  // whatever happens below, the cluster gets its node back
  ASSERT_EQ(cluster("kill-node", lost), "");
  // Slurm notices within SlurmdTimeout (20 s) and requeues the job.
  ASSERT_TRUE(test::wait_requeued(id, 120s, 60s)) << log();
  // While the node is away: every run file is whole and counted once (a finished run as ok, a
  // run cut short as stopped or not at all), and the job waits.
  const auto between = test::read_runs(t / "out");
  EXPECT_LE(between.size(), 2u);
  std::size_t finished = 0;
  for (const auto& [key, rec] : between) {
    EXPECT_TRUE(rec.status == RunStatus::Ok || rec.status == RunStatus::Stopped) << key << ": " << rec.error;
    finished += rec.status == RunStatus::Ok;
  }
  EXPECT_LT(finished, 2u) << "the run on the lost node was cut short";
  std::this_thread::sleep_for(5s);
  EXPECT_EQ(test::job_field(test::show_job(id), "JobState"), "PENDING") << "the job waits for its three nodes";
  ASSERT_EQ(cluster("start-node", lost), "");
  const auto job = test::wait_job_ended(id, 300s);
  ASSERT_EQ(test::job_field(job, "JobState"), "COMPLETED") << log();
  EXPECT_NE(log().find("attempt 2: done"), std::string::npos) << log();
  expect_as_reference(t / "out");
  std::size_t second = 0;
  for (const auto& [key, rec] : test::read_runs(t / "out")) second += rec.provenance.at("attempt") == 2;
  EXPECT_GE(second, 1u) << "the lost run finished in the requeued attempt";
}

}  // namespace
}  // namespace lrb
