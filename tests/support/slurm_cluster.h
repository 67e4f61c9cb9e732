#pragma once
// Test support for the `slurm` label: the one-node test cluster of slurm/test_cluster.sh
// (scripts/test.sh starts it), and Slurm jobs seen through scontrol.
#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace lrb::test {

// Points this process (and every child) at the test cluster: SLURM_CONF as set, else
// ${LRB_SLURM_DIR:-/tmp/lrb-slurm}/slurm.conf. Returns "" when the cluster answers with a
// usable node, else a message that says how to start it.
std::string use_test_cluster();

// Points this process (and every child) at the cluster of several nodes of
// slurm/multinode_cluster.sh: SLURM_CONF = ${LRB_MN_DIR:-/tmp/lrb-multinode}/slurm.conf
// (always: the one-node cluster's SLURM_CONF may be set). "" when every node answers idle,
// else a message that says how to start it.
std::string use_multinode_cluster();

// One task of a job as `scontrol show job -o` prints it: JobId, ArrayTaskId, JobState,
// Restarts, ExitCode, ... (an array job has one per task).
using JobFields = std::map<std::string, std::string>;
std::vector<JobFields> show_job(const std::string& id);

// True once every task of the job has ended (COMPLETED, FAILED, CANCELLED, TIMEOUT...).
bool job_ended(const std::vector<JobFields>& tasks);
// Polls until the job has ended (returns its tasks) or the timeout passes (returns {}).
std::vector<JobFields> wait_job_ended(const std::string& id, std::chrono::seconds timeout);
// Polls until `pred` holds for the job's tasks; false on timeout.
template <class Pred>
bool wait_job(const std::string& id, std::chrono::seconds timeout, Pred pred);

// Polls until job `id` has been requeued once (Restarts = 1) and then until it waits for its
// next attempt (PENDING); false when either does not happen within its timeout.
bool wait_requeued(const std::string& id, std::chrono::seconds restarted_within, std::chrono::seconds pending_within);

// The first line of `output` made only of digits: a job id printed by sbatch --parsable
// or `lrbench slurm --submit`; "" when none. `nth` picks a later one.
std::string job_id_in(const std::string& output, int nth = 0);

// Cancels the job when the test ends early, so that no job outlives its folder.
class JobGuard {
 public:
  JobGuard() = default;
  ~JobGuard();
  void add(const std::string& id) { ids_.push_back(id); }

 private:
  std::vector<std::string> ids_;
};

// A field of a job's first task ("(no job)" when there is none, "(no NAME)" when absent).
std::string job_field(const std::vector<JobFields>& tasks, const std::string& name);

// 2 runs (softmax and linear attention, one seed) of about 10 s each on a 2-core machine,
// a checkpoint every 100 steps: long enough to be caught mid-run.
std::string long_sweep();
// Periodic checkpoints in a results folder; waits until `runs` of them exist (each of
// that many runs is mid-run), false on timeout.
std::size_t count_checkpoints(const std::filesystem::path& out);
bool wait_mid_run(const std::filesystem::path& out, std::size_t runs, std::chrono::seconds timeout);

// PIDs of live lrbench processes (this build's launcher, or the lrbench-core it starts) whose
// environment says SLURM_JOB_ID=id.
std::vector<int> job_processes(const std::string& lrbench_binary, const std::string& id);

}  // namespace lrb::test

#include <thread>

template <class Pred>
bool lrb::test::wait_job(const std::string& id, std::chrono::seconds timeout, Pred pred) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    if (pred(show_job(id))) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  return false;
}
