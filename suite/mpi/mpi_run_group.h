#pragma once
// RunGroup over MPI: the world split into groups of k consecutive ranks (MPI_Comm_split),
// one communicator per group. Waits poll and then sleep, so a member waiting for another
// (member 0 evaluating alone, or the next run) does not steal a core from it.
#include <cstdint>
#include <memory>

#include "suite/mpi/mpi_session.h"
#include "suite/mpi/run_group.h"

namespace lrb {

class MpiRunGroup final : public RunGroup {
 public:
  // Collective over the world; k divides the world's size (checked by the caller).
  MpiRunGroup(const MpiSession& mpi, int ranks_per_group);
  ~MpiRunGroup() override;
  MpiRunGroup(const MpiRunGroup&) = delete;
  MpiRunGroup& operator=(const MpiRunGroup&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int index() const { return index_; }  // which group of the world
  void sum(float* data, std::size_t count) override;
  void sum(double* data, std::size_t count) override;
  std::string exchange() const override { return "mpi"; }
  std::string open_device_exchange(int) override { return ""; }  // host memory: nothing to open
  void sum_on_device(void* data, std::size_t count, Element type, void* cuda_stream) override;
  int max(int value) override;
  std::vector<std::string> gather_text(const std::string& mine) override;
  nlohmann::json describe() const override;

  // Member 0's value on every member: member 0 hands the run it got from the queue (or -1,
  // no more work) to the others, who sleep while they wait.
  std::int64_t share_from_leader(std::int64_t value);
  // Member 0's `bytes` bytes at `data`, on every member (blocking).
  void broadcast_from_leader(void* data, std::size_t bytes);

 private:
  struct Comm;
  std::unique_ptr<Comm> comm_;
  int rank_ = 0, size_ = 1, index_ = 0;
  nlohmann::json members_;
};

}  // namespace lrb
