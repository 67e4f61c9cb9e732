#include "suite/mpi/work_queue.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>

#include "suite/core/errors.h"

namespace lrb {

namespace {
constexpr int kTagRequest = 7101;
constexpr int kTagReply = 7102;
constexpr auto kPoll = std::chrono::milliseconds(2);
}  // namespace

WorkQueue::WorkQueue(const MpiSession& mpi, std::vector<WorkItem> items, ProgressBoard* board, int ranks_per_item)
    : mpi_(mpi), items_(std::move(items)), board_(board), askers_(mpi.size() / std::max(1, ranks_per_item)) {
  std::stable_sort(items_.begin(), items_.end(), [](const WorkItem& a, const WorkItem& b) { return a.cost > b.cost; });
  if (mpi_.rank() == 0 && askers_ > 1) service_ = std::thread([this] { service_loop(); });
}

WorkQueue::~WorkQueue() {
  if (service_.joinable()) service_.join();
}

std::int64_t WorkQueue::serve(int rank, std::int64_t prev_index, int prev_outcome) {
  if (prev_index >= 0) {
    const auto outcome = static_cast<ItemOutcome>(prev_outcome);
    if (outcome == ItemOutcome::Ok) ++totals_.ok;
    if (outcome == ItemOutcome::Failed) ++totals_.failed;
    if (outcome == ItemOutcome::Stopped) {
      ++totals_.stopped;
      stopping_ = true;  // a stop reaches every rank of the job; hand out nothing new
    }
    if (board_) board_->finished(rank, prev_index, outcome);
  }
  if (stopping_ || next_ >= items_.size()) {
    ++ranks_released_;
    return -1;
  }
  const std::int64_t idx = items_[next_++].index;
  if (board_) board_->assigned(rank, idx);
  return idx;
}

void WorkQueue::service_loop() {
  const int others = askers_ - 1;
  int released_others = 0;
  while (released_others < others) {
    int flag = 0;
    MPI_Status st;
    LRB_MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, kTagRequest, MPI_COMM_WORLD, &flag, &st));
    if (!flag) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (board_) board_->tick();
      }
      std::this_thread::sleep_for(kPoll);
      continue;
    }
    std::int64_t msg[2];
    LRB_MPI_CHECK(MPI_Recv(msg, 2, MPI_INT64_T, st.MPI_SOURCE, kTagRequest, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    std::int64_t reply;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      reply = serve(st.MPI_SOURCE, msg[0], static_cast<int>(msg[1]));
    }
    if (reply < 0) ++released_others;
    LRB_MPI_CHECK(MPI_Send(&reply, 1, MPI_INT64_T, st.MPI_SOURCE, kTagReply, MPI_COMM_WORLD));
  }
}

std::optional<std::int64_t> WorkQueue::next(std::optional<std::pair<std::int64_t, ItemOutcome>> previous) {
  const std::int64_t prev_index = previous ? previous->first : -1;
  const int prev_outcome = previous ? static_cast<int>(previous->second) : 0;
  std::int64_t idx;
  if (mpi_.rank() == 0) {
    std::lock_guard<std::mutex> lock(mutex_);
    idx = serve(0, prev_index, prev_outcome);
  } else {
    std::int64_t msg[2] = {prev_index, prev_outcome};
    LRB_MPI_CHECK(MPI_Send(msg, 2, MPI_INT64_T, 0, kTagRequest, MPI_COMM_WORLD));
    MPI_Request req;
    LRB_MPI_CHECK(MPI_Irecv(&idx, 1, MPI_INT64_T, 0, kTagReply, MPI_COMM_WORLD, &req));
    int done = 0;
    while (true) {
      LRB_MPI_CHECK(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
      if (done) break;
      std::this_thread::sleep_for(kPoll);
    }
  }
  if (idx < 0) return std::nullopt;
  return idx;
}

QueueTotals WorkQueue::finish() {
  if (service_.joinable()) service_.join();
  if (board_) board_->close();
  if (!mpi_.using_mpi() || mpi_.size() == 1) return totals_;
  mpi_.barrier_sleeping();
  int t[3] = {totals_.ok, totals_.failed, totals_.stopped};
  LRB_MPI_CHECK(MPI_Bcast(t, 3, MPI_INT, 0, MPI_COMM_WORLD));
  return QueueTotals{t[0], t[1], t[2]};
}

}  // namespace lrb
