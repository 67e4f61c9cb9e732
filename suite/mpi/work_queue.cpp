#include "suite/mpi/work_queue.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "suite/core/errors.h"

namespace lrb {

namespace {
constexpr int kTagRequest = 7101;
constexpr int kTagReply = 7102;
constexpr auto kPoll = std::chrono::milliseconds(2);
constexpr auto kWaitPoll = std::chrono::milliseconds(20);

// A request: the previous item's index and outcome, then the message for the source.
std::vector<char> encode_request(std::int64_t index, std::int64_t outcome, const std::string& message) {
  std::vector<char> bytes(2 * sizeof(std::int64_t) + message.size());
  std::memcpy(bytes.data(), &index, sizeof index);
  std::memcpy(bytes.data() + sizeof index, &outcome, sizeof outcome);
  std::memcpy(bytes.data() + 2 * sizeof index, message.data(), message.size());
  return bytes;
}

bool by_cost(const WorkItem& a, const WorkItem& b) { return a.cost > b.cost; }
}  // namespace

WorkQueue::WorkQueue(const MpiSession& mpi, std::vector<WorkItem> items, ProgressBoard* board, int ranks_per_item,
                     WorkSource* source)
    : mpi_(mpi), items_(std::move(items)), board_(board), source_(source), askers_(mpi.size() / std::max(1, ranks_per_item)) {
  std::stable_sort(items_.begin(), items_.end(), by_cost);
  if (mpi_.rank() == 0 && askers_ > 1) service_ = std::thread([this] { service_loop(); });
}

WorkQueue::~WorkQueue() {
  if (service_.joinable()) service_.join();
}

std::int64_t WorkQueue::serve(int rank, std::int64_t prev_index, int prev_outcome, const std::string& message) {
  if (prev_index >= 0) {
    const auto outcome = static_cast<ItemOutcome>(prev_outcome);
    --in_flight_;
    if (outcome == ItemOutcome::Ok) ++totals_.ok;
    if (outcome == ItemOutcome::Failed) ++totals_.failed;
    if (outcome == ItemOutcome::Stopped) {
      ++totals_.stopped;
      stopping_ = true;  // a stop reaches every rank of the job; hand out nothing new
    }
    if (board_) board_->finished(rank, prev_index, outcome);
    if (source_) source_->finished(prev_index, outcome, message);
  }
  if (!stopping_ && next_ >= items_.size() && source_) {
    WorkSource::Refill more = source_->refill(in_flight_);
    if (!more.items.empty()) {
      std::stable_sort(more.items.begin(), more.items.end(), by_cost);
      if (board_) board_->add(more.items, more.why);
      items_.insert(items_.end(), more.items.begin(), more.items.end());
    } else if (more.wait && in_flight_ > 0) {
      return kWait;
    }
  }
  if (!stopping_ && source_ && next_ < items_.size() && !source_->keep_going()) stopping_ = true;
  if (stopping_ || next_ >= items_.size()) {
    ++ranks_released_;
    return -1;
  }
  const std::int64_t idx = items_[next_++].index;
  ++in_flight_;
  if (board_) board_->assigned(rank, idx);
  return idx;
}

void WorkQueue::service_loop() {
  const int others = askers_ - 1;
  int released_others = 0;
  std::vector<int> waiting;  // ranks whose reply is held back
  auto reply_to = [&](int rank, std::int64_t reply) {
    if (reply < 0) ++released_others;
    LRB_MPI_CHECK(MPI_Send(&reply, 1, MPI_INT64_T, rank, kTagReply, MPI_COMM_WORLD));
  };
  // Each waiting rank asks again, as if it had just come: an item in flight may have ended.
  auto serve_waiting = [&] {
    for (auto it = waiting.begin(); it != waiting.end();) {
      std::int64_t reply;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        reply = serve(*it, -1, 0, {});
      }
      if (reply == kWait) {
        ++it;
        continue;
      }
      reply_to(*it, reply);
      it = waiting.erase(it);
    }
  };
  auto last_retry = std::chrono::steady_clock::now();
  while (released_others < others) {
    int flag = 0;
    MPI_Status st;
    LRB_MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, kTagRequest, MPI_COMM_WORLD, &flag, &st));
    if (!flag) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (board_) board_->tick();
      }
      // Rank 0's own run may have ended meanwhile (it reports under the lock, not here).
      if (!waiting.empty() && std::chrono::steady_clock::now() - last_retry > kWaitPoll) {
        serve_waiting();
        last_retry = std::chrono::steady_clock::now();
      }
      std::this_thread::sleep_for(kPoll);
      continue;
    }
    int bytes = 0;
    LRB_MPI_CHECK(MPI_Get_count(&st, MPI_BYTE, &bytes));
    LRB_CHECK(bytes >= static_cast<int>(2 * sizeof(std::int64_t)), "work queue: a request shorter than its header");
    std::vector<char> buffer(static_cast<std::size_t>(bytes));
    LRB_MPI_CHECK(MPI_Recv(buffer.data(), bytes, MPI_BYTE, st.MPI_SOURCE, kTagRequest, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    std::int64_t prev_index = 0, prev_outcome = 0;
    std::memcpy(&prev_index, buffer.data(), sizeof prev_index);
    std::memcpy(&prev_outcome, buffer.data() + sizeof prev_index, sizeof prev_outcome);
    const std::string message(buffer.data() + 2 * sizeof prev_index, buffer.size() - 2 * sizeof prev_index);
    std::int64_t reply;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      reply = serve(st.MPI_SOURCE, prev_index, static_cast<int>(prev_outcome), message);
    }
    if (reply == kWait) waiting.push_back(st.MPI_SOURCE);
    else reply_to(st.MPI_SOURCE, reply);
    if (prev_index >= 0) serve_waiting();  // a finished item may have opened the next wave
  }
}

std::optional<std::int64_t> WorkQueue::next(std::optional<std::pair<std::int64_t, ItemOutcome>> previous,
                                            const std::string& message) {
  const std::int64_t prev_index = previous ? previous->first : -1;
  const int prev_outcome = previous ? static_cast<int>(previous->second) : 0;
  std::int64_t idx;
  if (mpi_.rank() == 0) {
    std::unique_lock<std::mutex> lock(mutex_);
    idx = serve(0, prev_index, prev_outcome, message);
    while (idx == kWait) {  // another rank's run may open the next wave: ask again shortly
      lock.unlock();
      std::this_thread::sleep_for(kWaitPoll);
      lock.lock();
      idx = serve(0, -1, 0, {});
    }
  } else {
    const std::vector<char> request = encode_request(prev_index, prev_outcome, message);
    LRB_MPI_CHECK(MPI_Send(request.data(), static_cast<int>(request.size()), MPI_BYTE, 0, kTagRequest, MPI_COMM_WORLD));
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
