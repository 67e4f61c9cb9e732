#pragma once
// What the sweep is doing, shown by rank 0: runs done/total, each rank's current run and an
// ETA. A live line on a terminal; plain log lines otherwise (files, CI logs, Slurm).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace lrb {

enum class ItemOutcome : int { Ok = 0, Failed = 1, Stopped = 2 };

struct WorkItem {
  std::int64_t index = 0;  // the run's position in the sweep
  double cost = 0;         // expected work, for ordering and the ETA
  std::string label;       // "listops/256 transformer seed 1"
};

class ProgressBoard {
 public:
  ProgressBoard(const std::vector<WorkItem>& items, int ranks, int already_done, std::FILE* out);
  // More items (a sequential study's next wave): counted from now on, announced in `why`.
  void add(const std::vector<WorkItem>& items, const std::string& why);
  void assigned(int rank, std::int64_t index);
  void finished(int rank, std::int64_t index, ItemOutcome outcome);
  void tick();   // redraws the live line, at most a few times a second
  void close();  // ends the live line

 private:
  std::string eta() const;
  void draw(bool force);
  const WorkItem* item(std::int64_t index) const;

  std::vector<WorkItem> items_;
  std::vector<std::int64_t> current_;  // per rank, -1 idle
  std::vector<std::chrono::steady_clock::time_point> started_;
  int already_done_;
  int done_ = 0, failed_ = 0, stopped_ = 0;
  double total_cost_ = 0, done_cost_ = 0;
  std::chrono::steady_clock::time_point start_, last_draw_;
  std::FILE* out_;
  bool tty_;
};

}  // namespace lrb
