#pragma once
// The ranks that train one run together ([sweep] ranks_per_run > 1: data parallelism).
// The runner sees only this interface; mpi_run_group.h implements it over MPI. Every call
// is collective over the group: each member makes the same calls in the same order.
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lrb {

class RunGroup {
 public:
  virtual ~RunGroup() = default;
  virtual int rank() const = 0;  // within the group; member 0 writes the run's files
  virtual int size() const = 0;

  // Element-wise sum over the members, in place. Every member ends with the same bits
  // (member 0 sums, then sends its result), and the same inputs give the same bits again.
  virtual void sum(float* data, std::size_t count) = 0;
  virtual void sum(double* data, std::size_t count) = 0;

  // How the group sums gradients: "mpi" (through host memory, sum above) or "nccl" (in
  // CUDA device memory, sum_on_device below): [sweep] exchange, resolved for this build.
  virtual std::string exchange() const = 0;
  // Collective, at the start of each run on CUDA device `device`: readies the device
  // exchange (NCCL: the group's communicator, created by the first run and reused). ""
  // when ready, else why not: the same text on every member, and the run fails with it.
  virtual std::string open_device_exchange(int device) = 0;
  enum class Element { Float32, Float64 };
  // Element-wise sum over the members of `count` values in CUDA device memory, in place,
  // queued on `cuda_stream` (a cudaStream_t) behind the work that produced them; complete
  // when it returns. Every member ends with member 0's bits, as with sum. Only after
  // open_device_exchange succeeded. A failed or hung exchange ends the job (host, rank).
  virtual void sum_on_device(void* data, std::size_t count, Element type, void* cuda_stream) = 0;
  // The largest value any member gave: agreement on a stop, a failure, a checkpoint.
  virtual int max(int value) = 0;
  // Every member's text, in member order (texts longer than a few KiB are cut).
  virtual std::vector<std::string> gather_text(const std::string& mine) = 0;
  // The members (world ranks and hosts), for provenance.
  virtual nlohmann::json describe() const = 0;
};

}  // namespace lrb
