#include "suite/sweep/job_steps.h"

#include <fmt/core.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "suite/core/errors.h"
#include "suite/core/exit_codes.h"

namespace lrb {

namespace {

constexpr std::int64_t kNoStep = std::numeric_limits<std::int32_t>::max();

// LRB_FAULT_JOB_STEP=<rank>:<step>:leave|skip, a fault trial of the tests: at <step>, rank
// <rank> throws before it meets the others ("leave"), or goes on as if it had met them
// ("skip": a collective out of order).
std::string fault_at(const MpiSession& mpi, JobStep step) {
  const char* fault = std::getenv("LRB_FAULT_JOB_STEP");
  if (fault == nullptr) return "";
  const std::string prefix = std::to_string(mpi.rank()) + ":" + job_step_name(step) + ":";
  if (std::strncmp(fault, prefix.c_str(), prefix.size()) != 0) return "";
  return fault + prefix.size();
}

}  // namespace

const char* job_step_name(JobStep step) {
  switch (step) {
    case JobStep::sweep_read: return "sweep_read";
    case JobStep::folder_opened: return "folder_opened";
    case JobStep::started: return "started";
    case JobStep::study_planned: return "study_planned";
    case JobStep::pending_shared: return "pending_shared";
    case JobStep::gpu_bound: return "gpu_bound";
    case JobStep::gpus_compared: return "gpus_compared";
    case JobStep::ready_to_run: return "ready_to_run";
    case JobStep::runs_done: return "runs_done";
    case JobStep::exit_code: return "exit_code";
  }
  return "?";
}

JobSteps::JobSteps(const MpiSession& mpi) : mpi_(mpi) {}

JobSteps::~JobSteps() {
  if (!ended_) meet(JobStep{0}, kExitInternal, /*leaving=*/true);
}

int JobSteps::meet(JobStep step, int code, bool leaving) {
  skipped_ = false;
  if (!leaving) {
    LRB_CHECK(static_cast<std::int64_t>(step) > static_cast<std::int64_t>(last_),
              std::string("job step ") + job_step_name(step) + " after " + job_step_name(last_));
    last_ = step;
    const std::string fault = fault_at(mpi_, step);
    if (fault == "leave") throw std::runtime_error(fmt::format("fault trial: rank {} leaves at step {}", mpi_.rank(), job_step_name(step)));
    if (fault == "skip") {
      skipped_ = true;
      return 0;
    }
  }
  // Leaving ranks take no part in the step check: max over {step, -step, code, leaving}.
  const std::int64_t s = leaving ? 0 : static_cast<std::int64_t>(step);
  const std::vector<std::int64_t> largest =
      mpi_.max_over_ranks(std::vector<std::int64_t>{s, leaving ? -kNoStep : -s, code, leaving ? 1 : 0});
  const std::int64_t highest = largest[0], lowest = -largest[1];
  if (highest > 0 && highest != lowest)
    mpi_.abort_job(fmt::format("ranks are at different steps of the job ({} and {}): a collective out of order, a bug in lrbench",
                               job_step_name(static_cast<JobStep>(lowest)), job_step_name(static_cast<JobStep>(highest))));
  if (leaving) {
    ended_ = true;
    return static_cast<int>(largest[2]);
  }
  // A rank has left: it will meet no later step, so every rank ends here, also where the
  // job would otherwise go on.
  if (largest[3] != 0) {
    ended_ = true;
    throw JobEnds(static_cast<int>(largest[2]));
  }
  return static_cast<int>(largest[2]);
}

void JobSteps::agree(JobStep step, int code) {
  if (const int job_code = meet(step, code, false)) {
    ended_ = true;  // every rank ends here: nothing more to meet
    throw JobEnds(job_code);
  }
}

int JobSteps::largest_code(JobStep step, int code) { return meet(step, code, false); }

int JobSteps::last_step(JobStep step, int code) {
  const int job_code = meet(step, code, false);
  ended_ = true;
  return job_code;
}

std::vector<std::int64_t> JobSteps::share_from_rank0(JobStep step, std::vector<std::int64_t> values) {
  agree(step, 0);
  if (!skipped_) mpi_.broadcast_from_rank0(values);
  return values;
}

std::vector<std::string> JobSteps::gather(JobStep step, const std::string& text, std::size_t width) {
  agree(step, 0);
  if (skipped_) return std::vector<std::string>(static_cast<std::size_t>(mpi_.size()), text);
  return mpi_.gather_to_all(text, width);
}

}  // namespace lrb
