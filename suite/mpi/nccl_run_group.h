#pragma once
// RunGroup whose gradients travel over NCCL, between the members' GPUs, with no copy to the
// host ([sweep] exchange = "nccl", or "auto" with device = "cuda" in a build with
// LRB_WITH_NCCL). Everything else (agreement on stops and failures, texts, the hand-out of
// runs) stays on the MPI group it wraps.
//
// One communicator per group: its unique id made by member 0 and broadcast over MPI, created
// by the group's first run on a device and reused by every later run, destroyed with the
// group (the end of the sweep, a stop) or aborted when an exchange fails. A communicator
// that cannot be created fails the run that asked for it, with the reason, on every member
// (the sweep goes on; later runs of the group fail with the same reason without trying
// again). Every NCCL and CUDA call is checked; a failure during an exchange, or one that
// does not finish within the timeout (LRB_NCCL_TIMEOUT_SECONDS, default 600), ends the job
// naming host, rank and call, like a failed MPI call: a group whose member lost its place in
// a collective cannot agree on anything else. The job resumes from its checkpoints.
//
// Built without LRB_WITH_NCCL, the class exists and open_device_exchange says NCCL is not
// built in, so that no caller needs a preprocessor test.
#include <memory>
#include <string>

#include "suite/mpi/mpi_run_group.h"

namespace lrb {

// Whether this lrbench was built with the NCCL exchange (LRB_WITH_NCCL).
bool nccl_compiled();
// The NCCL library's version ("2.22.3"), or "" without NCCL.
std::string nccl_version();

// [sweep] exchange resolved for this build: "auto" is "nccl" for device = "cuda" in a build
// with NCCL, else "mpi"; "mpi" and "nccl" stay (the job refuses "nccl" without NCCL).
std::string chosen_exchange(const std::string& requested, const std::string& device);

class NcclRunGroup final : public RunGroup {
 public:
  // `members` outlives this group; `session` names host and rank in messages.
  NcclRunGroup(MpiRunGroup& members, const MpiSession& session);
  ~NcclRunGroup() override;
  NcclRunGroup(const NcclRunGroup&) = delete;
  NcclRunGroup& operator=(const NcclRunGroup&) = delete;

  int rank() const override { return members_.rank(); }
  int size() const override { return members_.size(); }
  void sum(float* data, std::size_t count) override { members_.sum(data, count); }
  void sum(double* data, std::size_t count) override { members_.sum(data, count); }
  int max(int value) override { return members_.max(value); }
  std::vector<std::string> gather_text(const std::string& mine) override { return members_.gather_text(mine); }
  nlohmann::json describe() const override;

  std::string exchange() const override { return "nccl"; }
  std::string open_device_exchange(int device) override;
  void sum_on_device(void* data, std::size_t count, Element type, void* cuda_stream) override;

 private:
  struct Comm;
  // This member's part of creating the communicator: "" or why it failed.
  std::string create(int device, const void* unique_id);
  // Ends the communicator: cleanly (finalize, destroy) or, after a failure, by abort.
  void close(bool clean);
  [[noreturn]] void fail(const std::string& call, const std::string& why);

  MpiRunGroup& members_;
  const MpiSession& session_;
  std::unique_ptr<Comm> comm_;
  std::string failure_;  // why the communicator could not be created (agreed by the members)
  double timeout_seconds_;
};

}  // namespace lrb
