#include "tests/support/slurm_cluster.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "tests/support/subprocess.h"
#include "tests/support/sweeps.h"

namespace lrb::test {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string use_test_cluster() {
  if (!std::getenv("SLURM_CONF")) {
    const char* dir = std::getenv("LRB_SLURM_DIR");
    const std::string conf = std::string(dir ? dir : "/tmp/lrb-slurm") + "/slurm.conf";
    setenv("SLURM_CONF", conf.c_str(), 1);
  }
  const std::string conf = std::getenv("SLURM_CONF");
  const std::string how = "start it with `slurm/test_cluster.sh up` (scripts/test.sh does it before ctest)";
  if (!fs::exists(conf)) return "the Slurm test cluster is not set up (no " + conf + "): " + how;
  const Result r = run({"sinfo", "-h", "-o", "%T"}, 30s);
  if (r.code != 0) return "the Slurm test cluster does not answer (sinfo: " + r.output + "): " + how;
  const std::string state = r.output.substr(0, r.output.find('\n'));
  if (state != "idle" && state != "mixed" && state != "allocated")
    return "the Slurm test cluster's node is '" + state + "', not idle: " + how + "; its logs are beside " + conf;
  return "";
}

std::string use_multinode_cluster() {
  const char* dir = std::getenv("LRB_MN_DIR");
  const std::string conf = std::string(dir ? dir : "/tmp/lrb-multinode") + "/slurm.conf";
  setenv("SLURM_CONF", conf.c_str(), 1);
  const std::string how = "start it with `slurm/multinode_cluster.sh up` (scripts/test.sh does it before ctest)";
  if (!fs::exists(conf)) return "the multinode test cluster is not set up (no " + conf + "): " + how;
  const Result r = run({"sinfo", "-h", "-N", "-o", "%N %T"}, 30s);
  if (r.code != 0) return "the multinode test cluster does not answer (sinfo: " + r.output + "): " + how;
  std::istringstream lines(r.output);
  int nodes = 0;
  for (std::string node, state; lines >> node >> state; ++nodes)
    if (state != "idle" && state != "mixed" && state != "allocated")
      return "node " + node + " of the multinode test cluster is '" + state + "', not idle: " + how;
  if (nodes < 3) return "the multinode test cluster has " + std::to_string(nodes) + " node(s), the tests need 3: " + how;
  return "";
}

std::string job_field(const std::vector<JobFields>& tasks, const std::string& name) {
  if (tasks.empty()) return "(no job)";
  const auto it = tasks.front().find(name);
  return it == tasks.front().end() ? "(no " + name + ")" : it->second;
}

std::string long_sweep() {
  std::string spec = tiny_sweep(1500, "checkpoint_every = 100\n");
  spec.replace(spec.find("seeds = 2"), 9, "seeds = [1]");
  spec.replace(spec.find("eval_every = 10"), 15, "eval_every = 100");
  return spec;
}

std::size_t count_checkpoints(const fs::path& out) {
  std::size_t n = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(out / "checkpoints", ec))
    if (e.path().extension() == ".pt" && e.path().filename().string()[0] != '.') ++n;
  return n;
}

bool wait_mid_run(const fs::path& out, std::size_t runs, std::chrono::seconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    if (count_checkpoints(out) >= runs) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

std::vector<JobFields> show_job(const std::string& id) {
  std::vector<JobFields> tasks;
  const Result r = run({"scontrol", "show", "job", "-o", id}, 30s);
  if (r.code != 0) return tasks;
  std::istringstream lines(r.output);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.find("JobId=") == std::string::npos) continue;
    JobFields f;
    std::istringstream words(line);
    std::string w;
    while (words >> w) {
      const auto eq = w.find('=');
      if (eq != std::string::npos) f.emplace(w.substr(0, eq), w.substr(eq + 1));
    }
    tasks.push_back(std::move(f));
  }
  return tasks;
}

bool job_ended(const std::vector<JobFields>& tasks) {
  static const std::set<std::string> final_states = {"COMPLETED", "FAILED",    "CANCELLED", "TIMEOUT",
                                                     "NODE_FAIL", "PREEMPTED", "OUT_OF_MEMORY", "BOOT_FAIL",
                                                     "DEADLINE"};
  if (tasks.empty()) return false;
  for (const auto& t : tasks) {
    const auto state = t.find("JobState");
    // scontrol prints COMPLETING (not final) while a job's processes are being ended.
    if (state == t.end() || !final_states.count(state->second)) return false;
  }
  return true;
}

std::vector<JobFields> wait_job_ended(const std::string& id, std::chrono::seconds timeout) {
  std::vector<JobFields> last;
  const bool ok = wait_job(id, timeout, [&](const std::vector<JobFields>& t) {
    last = t;
    return job_ended(t);
  });
  return ok ? last : std::vector<JobFields>{};
}

bool wait_requeued(const std::string& id, std::chrono::seconds restarted_within, std::chrono::seconds pending_within) {
  return wait_job(id, restarted_within, [](const std::vector<JobFields>& t) { return job_field(t, "Restarts") == "1"; }) &&
         wait_job(id, pending_within, [](const std::vector<JobFields>& t) { return job_field(t, "JobState") == "PENDING"; });
}

std::string job_id_in(const std::string& output, int nth) {
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.empty() && line.find_first_not_of("0123456789") == std::string::npos && nth-- == 0) return line;
  }
  return "";
}

JobGuard::~JobGuard() {
  for (const auto& id : ids_) {
    if (job_ended(show_job(id))) continue;
    run({"scancel", id}, 30s);
    wait_job_ended(id, 30s);
  }
}

std::vector<int> job_processes(const std::string& lrbench_binary, const std::string& id) {
  std::vector<int> pids;
  std::error_code ec;
  const fs::path binary = fs::canonical(lrbench_binary, ec);
  // The launcher execs lrbench-core, beside it: that is what a rank runs.
  const fs::path core = binary.parent_path() / "lrbench-core";
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code ec2;
    const fs::path exe = fs::read_symlink(e.path() / "exe", ec2);
    if (ec2 || (exe != binary && exe != core)) continue;
    std::ifstream env(e.path() / "environ", std::ios::binary);
    std::string var;
    while (std::getline(env, var, '\0'))
      if (var == "SLURM_JOB_ID=" + id) pids.push_back(std::stoi(name));
  }
  return pids;
}

}  // namespace lrb::test
