#pragma once
// Dynamic hand-out of runs, longest expected first. Rank 0 serves requests from a thread
// while its main thread trains like every other rank, so no rank is spent on dispatching
// alone and none idles while work remains. In a world of one there is no thread and no MPI.
//
// A WorkSource (rank 0) may add work when the items run out — a sequential study's next
// wave — and hears of every finished item with the message its rank sent along (the run's
// record). While it has nothing now but may have more once a running item finishes, an
// asking rank waits (its reply is held back) instead of being released.
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "suite/mpi/mpi_session.h"
#include "suite/mpi/progress.h"

namespace lrb {

struct QueueTotals {
  int ok = 0, failed = 0, stopped = 0;
};

class WorkSource {
 public:
  virtual ~WorkSource() = default;
  // An item finished on some rank; `message` is what that rank passed to next() with it.
  virtual void finished(std::int64_t index, ItemOutcome outcome, const std::string& message) = 0;
  struct Refill {
    std::vector<WorkItem> items;  // to hand out now
    bool wait = false;            // none now, but an item in flight may bring more: hold the asker
    std::string why;              // for the progress board: "look 2: the next wave"
  };
  // The queue is empty and `in_flight` items are running. Called on rank 0 under the
  // queue's lock, from its serving thread or its main thread; never with wait honoured
  // when nothing is in flight.
  virtual Refill refill(int in_flight) = 0;
  // Asked before each item is handed out: false stops handing out (a budget spent); the
  // items not handed out are left for a later session.
  virtual bool keep_going() { return true; }
};

class WorkQueue {
 public:
  // Every rank passes the same items; they are served in order of decreasing cost. With
  // `ranks_per_item` = k > 1 (data parallelism) only ranks 0, k, 2k... ask: each hands
  // what it gets to the rest of its group (suite/mpi/mpi_run_group.h). Every rank calls finish().
  WorkQueue(const MpiSession& mpi, std::vector<WorkItem> items, ProgressBoard* board /* rank 0 only */,
            int ranks_per_item = 1, WorkSource* source /* rank 0 only, may be null */ = nullptr);
  ~WorkQueue();

  // Reports how the previous item ended (if any, with `message` for the source) and returns
  // the next index, or nothing when no work is left for this rank (the queue is empty, or a
  // rank was stopped).
  std::optional<std::int64_t> next(std::optional<std::pair<std::int64_t, ItemOutcome>> previous,
                                   const std::string& message = {});

  // Collective: waits (sleeping) for every rank, returns the totals over all ranks.
  QueueTotals finish();

 private:
  static constexpr std::int64_t kWait = -2;  // serve(): hold the asker's reply
  std::int64_t serve(int rank, std::int64_t prev_index, int prev_outcome, const std::string& message);  // rank 0, under mutex_
  void service_loop();

  const MpiSession& mpi_;
  std::vector<WorkItem> items_;
  std::size_t next_ = 0;
  bool stopping_ = false;
  int ranks_released_ = 0;  // ranks told "no more work"
  int in_flight_ = 0;       // items handed out and not yet reported finished
  QueueTotals totals_;
  ProgressBoard* board_;
  WorkSource* source_;
  int askers_;  // ranks that ask for work: the world, or one per group
  std::mutex mutex_;
  std::thread service_;
};

}  // namespace lrb
