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
  // The largest value any member gave: agreement on a stop, a failure, a checkpoint.
  virtual int max(int value) = 0;
  // Every member's text, in member order (texts longer than a few KiB are cut).
  virtual std::vector<std::string> gather_text(const std::string& mine) = 0;
  // The members (world ranks and hosts), for provenance.
  virtual nlohmann::json describe() const = 0;
};

}  // namespace lrb
