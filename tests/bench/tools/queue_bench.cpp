// How far the one work queue on rank 0 goes: every rank asks for runs and "works" on each
// by sleeping (no CPU), so that hundreds of ranks fit on a few cores; rank 0 serves the
// others from its thread (suite/mpi/work_queue.h) with the progress board, and works too.
// Prints one line of figures for tests/bench/queue_scale.sh, which fits and projects them:
//
//   mpirun -np R lrb_queue_bench RUNS WORK_MS
//     R ranks share RUNS runs of WORK_MS milliseconds each.
//   ranks R runs N work_ms W wall_s S requests_per_s Q latency_median_us A latency_p99_us B
//   rank0_cpu_s C rank0_cpu_share F
//
// A request's latency is measured on the asking rank (request sent to reply received):
// rank 0's service thread polls every 2 ms when idle, so it includes up to one poll's wait.
// Rank 0's CPU is its process's user + system time over the queue's lifetime: the service
// thread, MPI's progress and the board (its main thread sleeps like every rank's).
#include <mpi.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "suite/mpi/mpi_session.h"
#include "suite/mpi/work_queue.h"

namespace {

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
}

}  // namespace

int main(int argc, char** argv) {
  lrb::MpiSession mpi(&argc, &argv);
  if (argc < 3) {
    std::fprintf(stderr, "usage: mpirun -np R lrb_queue_bench RUNS WORK_MS\n");
    return 2;
  }
  const int runs = std::stoi(argv[1]);
  const double work_ms = std::stod(argv[2]);

  std::vector<lrb::WorkItem> items;
  for (int i = 0; i < runs; ++i) items.push_back({i, 1.0, "bench/" + std::to_string(i)});
  std::FILE* log = std::tmpfile();  // the board writes as in a sweep; its lines are not read
  lrb::ProgressBoard board(items, mpi.size(), 0, log);

  mpi.barrier_sleeping();
  const double cpu0 = cpu_seconds();
  const auto start = std::chrono::steady_clock::now();
  std::vector<double> latency_us;
  {
    lrb::WorkQueue queue(mpi, items, mpi.rank() == 0 ? &board : nullptr);
    std::optional<std::pair<std::int64_t, lrb::ItemOutcome>> previous;
    while (true) {
      const auto asked = std::chrono::steady_clock::now();
      const auto index = queue.next(previous);
      if (mpi.rank() != 0)
        latency_us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - asked).count());
      if (!index) break;
      std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(work_ms));
      previous = std::make_pair(*index, lrb::ItemOutcome::Ok);
    }
    const lrb::QueueTotals totals = queue.finish();
    if (mpi.rank() == 0 && totals.ok != runs) {
      std::fprintf(stderr, "queue bench: FAILED: %d of %d runs reported done\n", totals.ok, runs);
      return 1;
    }
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double cpu = cpu_seconds() - cpu0;

  // Every asking rank's latencies to rank 0.
  int mine = static_cast<int>(latency_us.size());
  std::vector<int> counts(static_cast<std::size_t>(mpi.size()));
  LRB_MPI_CHECK(MPI_Gather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD));
  std::vector<int> offsets(counts.size());
  int total = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) offsets[r] = total, total += counts[r];
  std::vector<double> every(mpi.rank() == 0 ? static_cast<std::size_t>(total) : 0);
  LRB_MPI_CHECK(MPI_Gatherv(latency_us.data(), mine, MPI_DOUBLE, every.data(), counts.data(), offsets.data(), MPI_DOUBLE, 0,
                            MPI_COMM_WORLD));
  if (log) std::fclose(log);
  if (mpi.rank() != 0) return 0;
  // Each run is one request, and each asking rank's last request is answered "no more".
  const double requests = static_cast<double>(runs + mpi.size() - 1);
  std::printf("ranks %d runs %d work_ms %g wall_s %.3f requests_per_s %.1f latency_median_us %.0f latency_p99_us %.0f "
              "rank0_cpu_s %.4f rank0_cpu_share %.5f\n",
              mpi.size(), runs, work_ms, wall, requests / wall, quantile(every, 0.5), quantile(every, 0.99), cpu,
              cpu / wall);
  return 0;
}
