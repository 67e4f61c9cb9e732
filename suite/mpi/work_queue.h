#pragma once
// Dynamic hand-out of runs, longest expected first. Rank 0 serves requests from a thread
// while its main thread trains like every other rank, so no rank is spent on dispatching
// alone and none idles while work remains. In a world of one there is no thread and no MPI.
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "suite/mpi/mpi_session.h"
#include "suite/mpi/progress.h"

namespace lrb {

struct QueueTotals {
  int ok = 0, failed = 0, stopped = 0;
};

class WorkQueue {
 public:
  // Every rank passes the same items; they are served in order of decreasing cost. With
  // `ranks_per_item` = k > 1 (data parallelism) only ranks 0, k, 2k... ask: each hands
  // what it gets to the rest of its group (suite/mpi/mpi_run_group.h). Every rank calls finish().
  WorkQueue(const MpiSession& mpi, std::vector<WorkItem> items, ProgressBoard* board /* rank 0 only */,
            int ranks_per_item = 1);
  ~WorkQueue();

  // Reports how the previous item ended (if any) and returns the next index, or nothing
  // when no work is left for this rank (the queue is empty, or a rank was stopped).
  std::optional<std::int64_t> next(std::optional<std::pair<std::int64_t, ItemOutcome>> previous);

  // Collective: waits (sleeping) for every rank, returns the totals over all ranks.
  QueueTotals finish();

 private:
  std::int64_t serve(int rank, std::int64_t prev_index, int prev_outcome);  // rank 0, under mutex_
  void service_loop();

  const MpiSession& mpi_;
  std::vector<WorkItem> items_;
  std::size_t next_ = 0;
  bool stopping_ = false;
  int ranks_released_ = 0;  // ranks told "no more work"
  QueueTotals totals_;
  ProgressBoard* board_;
  int askers_;  // ranks that ask for work: the world, or one per group
  std::mutex mutex_;
  std::thread service_;
};

}  // namespace lrb
