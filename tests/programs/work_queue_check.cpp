// The work queue on its own, under mpirun: every rank asks for items and "works" on each
// for a random few milliseconds while rank 0 serves the others from its thread, updates the
// progress board and works too. Rank 0 then gathers what every rank did and checks that
// each item was handed out exactly once and that the totals agree. It is the threaded
// heart of a sweep without LibTorch, so ThreadSanitizer can watch it (scripts/sanitize.sh
// tsan); the Mpi test of tests/integration/work_queue_test.cpp runs it in every build.
//
//   mpirun -np R lrb_work_queue_check ITEMS [STOP_AFTER]
// With STOP_AFTER = k, rank 1 reports its k-th item as stopped: the queue hands out
// nothing new, and every item is then done at most once.
#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "suite/mpi/mpi_session.h"
#include "suite/mpi/work_queue.h"

namespace {

int fail(const char* what) {
  std::fprintf(stderr, "work queue check: FAILED: %s\n", what);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  lrb::MpiSession mpi(&argc, &argv);
  if (argc < 2) return fail("usage: lrb_work_queue_check ITEMS [STOP_AFTER]");
  const int count = std::stoi(argv[1]);
  const int stop_after = argc > 2 ? std::stoi(argv[2]) : 0;

  std::vector<lrb::WorkItem> items;
  for (int i = 0; i < count; ++i) items.push_back({i, 1.0 + i % 7, "item " + std::to_string(i)});
  std::FILE* log = std::tmpfile();  // the board's lines: written, not checked
  lrb::ProgressBoard board(items, mpi.size(), 0, log);
  lrb::WorkQueue queue(mpi, items, mpi.rank() == 0 ? &board : nullptr);

  std::mt19937 rng(static_cast<unsigned>(mpi.rank()) + 1);
  std::vector<std::int64_t> done;
  std::optional<std::pair<std::int64_t, lrb::ItemOutcome>> previous;
  while (auto index = queue.next(previous)) {
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 3000));
    done.push_back(*index);
    const bool stop = mpi.rank() == 1 && stop_after > 0 && static_cast<int>(done.size()) == stop_after;
    previous = std::make_pair(*index, stop ? lrb::ItemOutcome::Stopped : lrb::ItemOutcome::Ok);
  }
  // The request that returned nothing reported the last outcome.
  const lrb::QueueTotals totals = queue.finish();

  // Every rank's items to rank 0 (without a launcher, a world of one without MPI).
  std::vector<std::int64_t> every = done;
  if (mpi.using_mpi()) {
    int mine = static_cast<int>(done.size());
    std::vector<int> counts(static_cast<std::size_t>(mpi.size()));
    LRB_MPI_CHECK(MPI_Gather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD));
    std::vector<int> offsets(counts.size());
    int total = 0;
    for (std::size_t r = 0; r < counts.size(); ++r) offsets[r] = total, total += counts[r];
    every.resize(mpi.rank() == 0 ? static_cast<std::size_t>(total) : 0);
    LRB_MPI_CHECK(MPI_Gatherv(done.data(), mine, MPI_INT64_T, every.data(), counts.data(), offsets.data(), MPI_INT64_T,
                              0, MPI_COMM_WORLD));
  }
  if (log) std::fclose(log);
  if (mpi.rank() != 0) return 0;
  const int all = static_cast<int>(every.size());

  std::vector<int> times(static_cast<std::size_t>(count));
  for (auto i : every) {
    if (i < 0 || i >= count) return fail("an index outside the items was handed out");
    ++times[static_cast<std::size_t>(i)];
  }
  for (int t : times)
    if (t > 1) return fail("an item was handed out twice");
  if (totals.ok + totals.failed + totals.stopped != all) return fail("the totals do not count every item done");
  if (stop_after == 0) {
    for (int t : times)
      if (t != 1) return fail("an item was never handed out");
    if (totals.ok != count) return fail("the totals do not say every item ended well");
  } else if (totals.stopped != 1) {
    return fail("the stop was not counted once");
  }
  std::printf("work queue check: %d items over %d ranks: %d done, each at most once%s (ok %d, stopped %d)\n", count,
              mpi.size(), all, stop_after == 0 ? " and every one done" : "", totals.ok, totals.stopped);
  return 0;
}
