#include "suite/run/sequential_source.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "suite/core/errors.h"

namespace lrb {

std::string study_message(const RunRecord& r) {
  nlohmann::json j = {{"key", r.key}, {"status", status_name(r.status)}, {"error", r.error}, {"spec", r.spec},
                      {"metrics", r.metrics}, {"provenance", {{"sweep", r.provenance.value("sweep", std::string())}}}};
  const std::vector<std::uint8_t> bytes = nlohmann::json::to_cbor(j);
  return std::string(bytes.begin(), bytes.end());
}

RunRecord record_from_study_message(const std::string& message) {
  const nlohmann::json j = nlohmann::json::from_cbor(message);
  RunRecord r;
  r.key = j.at("key").get<std::string>();
  r.status = status_from_name(j.at("status").get<std::string>());
  r.error = j.at("error").get<std::string>();
  r.spec = j.at("spec");
  r.metrics = j.at("metrics").get<std::map<std::string, double>>();
  r.provenance = j.at("provenance");
  return r;
}

SequentialSource::SequentialSource(const SweepSpec& spec, const ExpandedSweep& ex, std::vector<std::size_t> mine,
                                   std::vector<RunRecord> finished, StudyJudge judge, StudyClock* clock,
                                   std::function<WorkItem(std::int64_t)> item_of, bool refill_waves)
    : spec_(spec), ex_(ex), mine_(std::move(mine)), records_(std::move(finished)), judge_(std::move(judge)), clock_(clock),
      item_of_(std::move(item_of)), refill_waves_(refill_waves) {
  for (const auto& r : ex_.runs) wave_runs_.push_back(wave_run(r.spec, ex_.claims));
  std::map<std::string, std::int64_t> index_of;
  for (const auto& r : ex_.runs) index_of.emplace(r.key, r.index);
  for (const auto& r : records_)
    if (r.status != RunStatus::Stopped)
      if (auto it = index_of.find(r.key); it != index_of.end()) done_.insert(it->second);
}

void SequentialSource::rejudge() {
  // The clock is written (and fsynced) when a run has finished, and otherwise at most every
  // few seconds: a rank waiting at a look asks again every few milliseconds.
  const auto now = std::chrono::steady_clock::now();
  if (clock_ && (dirty_ || now - last_beat_ >= kBeatEvery)) {
    last_beat_ = now;
    const double spent = clock_->beat();
    if (spec_.sweep.budget_seconds && spent >= *spec_.sweep.budget_seconds && !budget_spent_) {
      budget_spent_ = true;
      dirty_ = true;
    }
  }
  if (!dirty_) return;
  plan_ = judge_(records_, budget_spent_);
  dirty_ = false;
  if (plan_.end != WavePlan::End::Running && !announced_end_) {
    announced_end_ = true;
    fmt::print(stderr, "lrbench: sequential study: {}\n", plan_.summary);
    std::fflush(stderr);
    if (clock_) clock_->ended(wave_end_name(plan_.end));
  }
}

std::vector<std::int64_t> SequentialSource::wave(std::int64_t seeds) const {
  std::vector<std::int64_t> out;
  for (std::size_t i : mine_) {
    const RunSpec& run = ex_.runs[i];
    if (done_.count(run.index) || handed_.count(run.index)) continue;
    if (run_in_wave(wave_runs_[i], *spec_.sweep.sequential, plan_.open, seeds)) out.push_back(run.index);
  }
  return out;
}

std::vector<std::int64_t> SequentialSource::initial() {
  rejudge();
  if (plan_.end != WavePlan::End::Running) return {};
  std::vector<std::int64_t> first = wave(plan_.wave_seeds);
  handed_.insert(first.begin(), first.end());
  fmt::print(stderr, "lrbench: sequential study ({}): {}\n", spec_.sweep.sequential->text(), plan_.summary);
  return first;
}

void SequentialSource::finished(std::int64_t index, ItemOutcome outcome, const std::string& message) {
  handed_.erase(index);
  if (outcome == ItemOutcome::Stopped) return;  // resumed by the next session
  done_.insert(index);
  if (message.empty()) return;
  try {
    records_.push_back(record_from_study_message(message));
    dirty_ = true;
  } catch (const std::exception& e) {
    // The run file is on disk: the next session reads it. This one schedules without it.
    fmt::print(stderr, "lrbench: warning: the record of run {} could not be read back ({}); the next look waits for a "
                       "rerun of the same command\n", index, e.what());
  }
}

bool SequentialSource::keep_going() {
  rejudge();
  return !budget_spent_;
}

WorkSource::Refill SequentialSource::refill(int in_flight) {
  Refill out;
  if (!refill_waves_) return out;
  rejudge();
  if (plan_.end != WavePlan::End::Running) return out;
  for (std::int64_t i : wave(plan_.wave_seeds)) {
    handed_.insert(i);
    out.items.push_back(item_of_(i));
  }
  if (!out.items.empty()) {
    out.why = "sequential study, " + plan_.summary;
    return out;
  }
  if (in_flight == 0) return out;
  // The look waits for runs in flight: start one run of the next wave of a claim still open.
  if (plan_.next_wave_seeds > 0) {
    std::vector<std::int64_t> ahead = wave(plan_.next_wave_seeds);
    if (!ahead.empty()) {
      std::sort(ahead.begin(), ahead.end(), [&](std::int64_t a, std::int64_t b) {
        const auto sa = ex_.runs[static_cast<std::size_t>(a)].spec.at("seed_index").get<std::int64_t>();
        const auto sb = ex_.runs[static_cast<std::size_t>(b)].spec.at("seed_index").get<std::int64_t>();
        return sa != sb ? sa < sb : a < b;
      });
      handed_.insert(ahead.front());
      ++speculative_;
      out.items.push_back(item_of_(ahead.front()));
      out.why = fmt::format("sequential study: ahead of look {}, a run of the next wave while the look waits", plan_.looks_done + 1);
      return out;
    }
  }
  out.wait = true;
  return out;
}

}  // namespace lrb
