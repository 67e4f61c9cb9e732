#pragma once
// The process's place in the job: MPI when a launcher started us (mpirun, srun --mpi=pmix),
// a single process otherwise. Every MPI call is checked and a failure names host and rank.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace lrb {

class MpiSession {
 public:
  // Initialises MPI (MPI_THREAD_MULTIPLE: rank 0 serves work from a thread) when the
  // environment shows a launcher; otherwise runs as a world of one without MPI.
  // Under Slurm, refuses (UserError) unless the world size equals SLURM_NTASKS.
  MpiSession(int* argc, char*** argv);
  ~MpiSession();  // MPI_Finalize when initialised
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  bool using_mpi() const { return mpi_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  int local_rank() const { return local_rank_; }  // rank among the ranks on this node
  int local_size() const { return local_size_; }
  const std::string& host() const { return host_; }
  std::string label() const;  // "host h rank r/size"

  // Collective helpers (no-ops in a world of one). Waiting ranks sleep instead of spinning,
  // so a rank that has finished does not steal a core from one still training.
  void barrier_sleeping() const;
  int max_over_ranks(int value) const;  // the largest value any rank gave
  // Elementwise: the largest of each entry any rank gave (every rank gives as many).
  std::vector<std::int64_t> max_over_ranks(std::vector<std::int64_t> values) const;
  // Rank 0's values, on every rank (the others' size is set from rank 0's).
  void broadcast_from_rank0(std::vector<std::int64_t>& values) const;
  // Every rank's text, by rank; each cut to at most `width` - 1 bytes.
  std::vector<std::string> gather_to_all(const std::string& text, std::size_t width) const;
  // Ends every rank of the job (MPI_Abort; std::abort in a world of one) after printing
  // `why` with host and rank: for a broken invariant, where waiting would hang.
  [[noreturn]] void abort_job(const std::string& why) const;

 private:
  bool mpi_ = false;
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  std::string host_;
};

// True when a launcher's environment is present (OMPI_COMM_WORLD_SIZE, PMIX_RANK, PMI_RANK).
bool launched_under_mpi();

// Aborts the whole job with a message naming host, rank, call and MPI's error text.
[[noreturn]] void mpi_call_failed(const char* call, int code, const char* file, int line);

// The first line of MPI_Get_library_version ("Open MPI v4.1.4"), for `lrbench doctor` and
// every run's provenance; callable before MPI_Init.
std::string mpi_library_version();

}  // namespace lrb

#define LRB_MPI_CHECK(call)                                                         \
  do {                                                                              \
    int lrb_mpi_rc_ = (call);                                                       \
    if (lrb_mpi_rc_ != MPI_SUCCESS) ::lrb::mpi_call_failed(#call, lrb_mpi_rc_, __FILE__, __LINE__); \
  } while (0)
