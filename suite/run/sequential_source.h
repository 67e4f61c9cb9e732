#pragma once
// A sequential study's side of the work queue (rank 0 of `lrbench run`): it holds the
// records of every finished run of the sweep, asks the study's judge (given by the CLI:
// suite/report/claims/sequential_claims.h) what the last look decided, and hands out the wave the
// open claims need. When a wave's last runs are still training, an idle rank is given one run
// of the next wave of the claims still open (it may prove unneeded if the look then decides
// them: it is kept and reported, but never read by a look that did not ask for it).
// The budget is checked at every refill: once spent, no run starts.
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "suite/config/expand.h"
#include "suite/config/sequential_design.h"
#include "suite/mpi/work_queue.h"
#include "suite/store/run_record.h"
#include "suite/store/study_log.h"

namespace lrb {

// From the finished runs and whether the budget is spent: the look's decision. A pure
// function of its arguments (the same runs give the same plan).
using StudyJudge = std::function<WavePlan(const std::vector<RunRecord>& runs, bool budget_spent)>;

// What a rank sends with a finished run, and back: the parts of its record a judge reads.
std::string study_message(const RunRecord& r);
RunRecord record_from_study_message(const std::string& message);

class SequentialSource : public WorkSource {
 public:
  // `mine`: indices into ex.runs this process may run (a shard's); `finished`: the records
  // of finished runs found on disk (index views: spec, status, error, metrics).
  SequentialSource(const SweepSpec& spec, const ExpandedSweep& ex, std::vector<std::size_t> mine,
                   std::vector<RunRecord> finished, StudyJudge judge, StudyClock* clock,
                   std::function<WorkItem(std::int64_t)> item_of, bool refill_waves);

  // The runs to start with: the current wave's, not finished. Also decides the first plan.
  std::vector<std::int64_t> initial();
  const WavePlan& plan() const { return plan_; }
  bool budget_spent() const { return budget_spent_; }
  std::size_t speculative() const { return speculative_; }

  void finished(std::int64_t index, ItemOutcome outcome, const std::string& message) override;
  Refill refill(int in_flight) override;
  bool keep_going() override;  // false once the budget is spent: no run starts after that

 private:
  void rejudge();
  std::vector<std::int64_t> wave(std::int64_t seeds) const;  // runs of the open claims' cells below `seeds`, not yet done or handed out

  const SweepSpec& spec_;
  const ExpandedSweep& ex_;
  std::vector<std::size_t> mine_;
  std::vector<WaveRun> wave_runs_;  // per run of the sweep
  std::vector<RunRecord> records_;
  std::set<std::int64_t> done_, handed_;
  StudyJudge judge_;
  StudyClock* clock_;
  std::function<WorkItem(std::int64_t)> item_of_;
  bool refill_waves_;
  bool dirty_ = true, budget_spent_ = false, announced_end_ = false;
  static constexpr std::chrono::seconds kBeatEvery{5};
  std::chrono::steady_clock::time_point last_beat_{};
  std::size_t speculative_ = 0;
  WavePlan plan_;
};

}  // namespace lrb
