#pragma once
// The job's collectives, in the one order every rank reaches them. An MPI job hangs when
// one rank leaves a collective the others wait in (an early return, an exception); here
// every collective of a sweep's job (run_sweep) goes through JobSteps, which
//  - checks that every rank is at the same step (ranks at different steps are a bug in
//    lrbench: the job is aborted naming both, never left to hang or to mix data);
//  - carries each rank's verdict: a rank that cannot go on gives its exit code, and every
//    rank learns it at that step and ends the job with it (JobEnds);
//  - lets a rank that leaves early (an exception, a return) say so from its destructor
//    at the others' next step, so that none of them waits for it.
// The work queue (suite/mpi/work_queue.h) and a data-parallel group's exchanges are
// protocols of their own between two of these steps.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "suite/mpi/mpi_session.h"

namespace lrb {

// In order: a rank reaches a later step only after every earlier one it takes (steps that
// a sweep does not need, such as the GPU ones on a CPU, are skipped by every rank alike).
enum class JobStep : std::int64_t {
  sweep_read = 1,      // the sweep file read and expanded
  folder_opened,       // rank 0 locked the results folder, scanned it and wrote the manifest
  started,             // no stop request came during start-up
  study_planned,       // a sequential study's first wave
  pending_shared,      // rank 0's list of runs left, to every rank
  gpu_bound,           // every rank has its GPU
  gpus_compared,       // no two ranks share one
  ready_to_run,        // every rank measured its peak and is ready for the queue
  runs_done,           // the queue is empty: any rank's failure to store a result
  exit_code,           // the code every rank exits with
};
const char* job_step_name(JobStep step);

// Thrown by a step at which some rank gave a non-zero code: every rank ends with `code`.
struct JobEnds : std::runtime_error {
  explicit JobEnds(int code) : std::runtime_error("the job ends with exit code " + std::to_string(code)), code(code) {}
  int code;
};

class JobSteps {
 public:
  explicit JobSteps(const MpiSession& mpi);
  // A rank leaving before the last step (an exception, a return) takes part in the others'
  // next step as "leaving, exit code 1": they end there instead of waiting for it.
  ~JobSteps();
  JobSteps(const JobSteps&) = delete;
  JobSteps& operator=(const JobSteps&) = delete;

  // Every rank gives its exit code (0: it can go on). Returns 0 when every rank gave 0;
  // otherwise throws JobEnds with the largest code (usage 2 wins over environment 1).
  void agree(JobStep step, int code);
  // The largest code any rank gave, where the job goes on either way.
  int largest_code(JobStep step, int code);
  // The same at the job's last step: after it, nothing more is met.
  int last_step(JobStep step, int code);
  // Rank 0's list, on every rank.
  std::vector<std::int64_t> share_from_rank0(JobStep step, std::vector<std::int64_t> values);
  // Every rank's text (at most `width` - 1 bytes of it), by rank.
  std::vector<std::string> gather(JobStep step, const std::string& text, std::size_t width);

 private:
  // The step's check: same step on every rank, and the largest code.
  int meet(JobStep step, int code, bool leaving);
  const MpiSession& mpi_;
  JobStep last_ = JobStep{0};
  bool ended_ = false;    // every rank knows the job's end: nothing more to meet
  bool skipped_ = false;  // the fault trial "skip" skipped this step's collective
};

}  // namespace lrb
