#include "suite/mpi/mpi_run_group.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <thread>

#include "suite/core/errors.h"

namespace lrb {

struct MpiRunGroup::Comm {
  MPI_Comm comm = MPI_COMM_NULL;
};

namespace {

// Polls a request: busy for the first tens of microseconds (a step's exchange between
// members that are both training completes within them), then sleeping in growing
// intervals, so that a member waiting on another that computes alone leaves it the core.
void wait_politely(MPI_Request& req) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  auto nap = std::chrono::microseconds(20);
  int done = 0;
  while (true) {
    LRB_MPI_CHECK(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
    if (done) return;
    if (clock::now() - start < std::chrono::microseconds(200)) continue;
    std::this_thread::sleep_for(nap);
    nap = std::min(nap * 2, std::chrono::microseconds(2000));
  }
}

// MPI counts are int: a buffer larger than that goes in pieces.
constexpr std::size_t kMaxPiece = static_cast<std::size_t>(1) << 30;

template <typename T>
void sum_in_pieces(MPI_Comm comm, int rank, T* data, std::size_t count, MPI_Datatype type) {
  for (std::size_t at = 0; at < count; at += kMaxPiece) {
    const int n = static_cast<int>(std::min(kMaxPiece, count - at));
    T* piece = data + at;
    // Summed at member 0 and sent from there: every member then holds member 0's bits
    // (an all-reduce may round differently on different members). Blocking calls: the
    // members arrive together (each has just computed its slice), and a large buffer goes
    // in many rounds, each of which would wait a nap under polling.
    if (rank == 0)
      LRB_MPI_CHECK(MPI_Reduce(MPI_IN_PLACE, piece, n, type, MPI_SUM, 0, comm));
    else
      LRB_MPI_CHECK(MPI_Reduce(piece, nullptr, n, type, MPI_SUM, 0, comm));
    LRB_MPI_CHECK(MPI_Bcast(piece, n, type, 0, comm));
  }
}

constexpr int kTextBytes = 4096;
constexpr int kHostBytes = 256;

}  // namespace

MpiRunGroup::MpiRunGroup(const MpiSession& mpi, int ranks_per_group) : comm_(std::make_unique<Comm>()) {
  LRB_CHECK(ranks_per_group >= 1 && mpi.size() % ranks_per_group == 0, "ranks_per_run must divide the world size");
  index_ = mpi.rank() / ranks_per_group;
  if (mpi.using_mpi()) {
    LRB_MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, index_, mpi.rank(), &comm_->comm));
    MPI_Comm_set_errhandler(comm_->comm, MPI_ERRORS_RETURN);
    LRB_MPI_CHECK(MPI_Comm_rank(comm_->comm, &rank_));
    LRB_MPI_CHECK(MPI_Comm_size(comm_->comm, &size_));
  }
  LRB_CHECK(size_ == ranks_per_group, "a run group has the wrong size");
  // The members' hosts, once: they go into every run's provenance.
  std::string host = mpi.host();
  host.resize(std::min<std::size_t>(host.size(), kHostBytes - 1));
  host.resize(kHostBytes, '\0');
  std::vector<char> hosts(static_cast<std::size_t>(kHostBytes) * static_cast<std::size_t>(size_));
  int world_rank = mpi.rank();
  std::vector<int> world_ranks(static_cast<std::size_t>(size_), world_rank);
  if (mpi.using_mpi()) {
    LRB_MPI_CHECK(MPI_Allgather(host.data(), kHostBytes, MPI_CHAR, hosts.data(), kHostBytes, MPI_CHAR, comm_->comm));
    LRB_MPI_CHECK(MPI_Allgather(&world_rank, 1, MPI_INT, world_ranks.data(), 1, MPI_INT, comm_->comm));
  } else {
    std::copy(host.begin(), host.end(), hosts.begin());
  }
  members_ = nlohmann::json::array();
  for (int m = 0; m < size_; ++m)
    members_.push_back({{"rank", world_ranks[static_cast<std::size_t>(m)]},
                        {"host", std::string(hosts.data() + static_cast<std::ptrdiff_t>(m) * kHostBytes)}});
}

MpiRunGroup::~MpiRunGroup() {
  if (comm_->comm != MPI_COMM_NULL) MPI_Comm_free(&comm_->comm);
}

void MpiRunGroup::sum(float* data, std::size_t count) {
  if (size_ > 1) sum_in_pieces(comm_->comm, rank_, data, count, MPI_FLOAT);
}

void MpiRunGroup::sum(double* data, std::size_t count) {
  if (size_ > 1) sum_in_pieces(comm_->comm, rank_, data, count, MPI_DOUBLE);
}

void MpiRunGroup::sum_on_device(void*, std::size_t, Element, void*) {
  LRB_CHECK(false, "the MPI exchange sums host memory: sum_on_device called on a group whose exchange is \"mpi\"");
}

int MpiRunGroup::max(int value) {
  if (size_ == 1) return value;
  int out = value;
  MPI_Request req;
  LRB_MPI_CHECK(MPI_Iallreduce(&value, &out, 1, MPI_INT, MPI_MAX, comm_->comm, &req));
  wait_politely(req);
  return out;
}

std::vector<std::string> MpiRunGroup::gather_text(const std::string& mine) {
  if (size_ == 1) return {mine};
  std::string slot = mine.substr(0, kTextBytes - 1);
  slot.resize(kTextBytes, '\0');
  std::vector<char> all(static_cast<std::size_t>(kTextBytes) * static_cast<std::size_t>(size_));
  MPI_Request req;
  LRB_MPI_CHECK(MPI_Iallgather(slot.data(), kTextBytes, MPI_CHAR, all.data(), kTextBytes, MPI_CHAR, comm_->comm, &req));
  wait_politely(req);
  std::vector<std::string> out;
  for (int m = 0; m < size_; ++m) out.emplace_back(all.data() + static_cast<std::ptrdiff_t>(m) * kTextBytes);
  return out;
}

nlohmann::json MpiRunGroup::describe() const {
  return {{"ranks_per_run", size_}, {"group", index_}, {"member", rank_}, {"members", members_}, {"exchange", "mpi"}};
}

void MpiRunGroup::broadcast_from_leader(void* data, std::size_t bytes) {
  LRB_CHECK(bytes <= static_cast<std::size_t>(INT_MAX), "a broadcast of more than INT_MAX bytes");
  if (size_ > 1) LRB_MPI_CHECK(MPI_Bcast(data, static_cast<int>(bytes), MPI_BYTE, 0, comm_->comm));
}

std::int64_t MpiRunGroup::share_from_leader(std::int64_t value) {
  if (size_ == 1) return value;
  MPI_Request req;
  LRB_MPI_CHECK(MPI_Ibcast(&value, 1, MPI_INT64_T, 0, comm_->comm, &req));
  wait_politely(req);
  return value;
}

}  // namespace lrb
