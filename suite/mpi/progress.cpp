#include "suite/mpi/progress.h"

#include <fmt/core.h>
#include <unistd.h>

namespace lrb {

namespace {
std::string human_seconds(double s) {
  if (s < 0) return "?";
  const long t = static_cast<long>(s + 0.5);
  if (t < 60) return fmt::format("{}s", t);
  if (t < 3600) return fmt::format("{}m{:02}s", t / 60, t % 60);
  return fmt::format("{}h{:02}m", t / 3600, (t % 3600) / 60);
}
}  // namespace

ProgressBoard::ProgressBoard(const std::vector<WorkItem>& items, int ranks, int already_done, std::FILE* out)
    : items_(items),
      current_(static_cast<std::size_t>(ranks), -1),
      started_(static_cast<std::size_t>(ranks)),
      already_done_(already_done),
      start_(std::chrono::steady_clock::now()),
      out_(out),
      tty_(::isatty(::fileno(out)) != 0) {
  for (const auto& it : items_) total_cost_ += it.cost;
  fmt::print(out_, "lrbench: {} runs to do on {} rank(s){}\n", items_.size(), ranks,
             already_done_ ? fmt::format(" ({} already done)", already_done_) : "");
  std::fflush(out_);
}

const WorkItem* ProgressBoard::item(std::int64_t index) const {
  for (const auto& it : items_)
    if (it.index == index) return &it;
  return nullptr;
}

std::string ProgressBoard::eta() const {
  if (done_cost_ <= 0) return "?";
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  return human_seconds(elapsed * (total_cost_ - done_cost_) / done_cost_);
}

void ProgressBoard::add(const std::vector<WorkItem>& items, const std::string& why) {
  items_.insert(items_.end(), items.begin(), items.end());
  for (const auto& it : items) total_cost_ += it.cost;
  if (tty_) fmt::print(out_, "\r\033[2K");
  fmt::print(out_, "lrbench: {}: {} more run(s)\n", why, items.size());
  std::fflush(out_);
  draw(true);
}

void ProgressBoard::assigned(int rank, std::int64_t index) {
  current_[static_cast<std::size_t>(rank)] = index;
  started_[static_cast<std::size_t>(rank)] = std::chrono::steady_clock::now();
  if (!tty_) {
    const WorkItem* it = item(index);
    fmt::print(out_, "lrbench: rank {} starts {}\n", rank, it ? it->label : std::to_string(index));
    std::fflush(out_);
  }
  draw(true);
}

void ProgressBoard::finished(int rank, std::int64_t index, ItemOutcome outcome) {
  const WorkItem* it = item(index);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                                    started_[static_cast<std::size_t>(rank)]).count();
  current_[static_cast<std::size_t>(rank)] = -1;
  if (outcome == ItemOutcome::Stopped) {
    ++stopped_;
  } else {
    ++done_;
    if (outcome == ItemOutcome::Failed) ++failed_;
    if (it) done_cost_ += it->cost;
  }
  const char* word = outcome == ItemOutcome::Ok ? "ok" : outcome == ItemOutcome::Failed ? "FAILED" : "stopped";
  if (tty_) fmt::print(out_, "\r\033[2K");
  fmt::print(out_, "lrbench: [{}/{}] {} {} (rank {}, {}) ETA {}\n", done_, items_.size(), word,
             it ? it->label : std::to_string(index), rank, human_seconds(secs), eta());
  std::fflush(out_);
  draw(true);
}

void ProgressBoard::tick() { draw(false); }

void ProgressBoard::draw(bool force) {
  if (!tty_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && now - last_draw_ < std::chrono::milliseconds(500)) return;
  last_draw_ = now;
  std::string line = fmt::format("[{}/{} done", done_, items_.size());
  if (failed_) line += fmt::format(", {} failed", failed_);
  line += "]";
  for (std::size_t r = 0; r < current_.size(); ++r) {
    if (current_[r] < 0) continue;
    const WorkItem* it = item(current_[r]);
    const double secs = std::chrono::duration<double>(now - started_[r]).count();
    line += fmt::format(" | r{}: {} {}", r, it ? it->label : "?", human_seconds(secs));
  }
  line += " | ETA " + eta();
  if (line.size() > 200) line = line.substr(0, 197) + "...";
  fmt::print(out_, "\r\033[2K{}", line);
  std::fflush(out_);
}

void ProgressBoard::close() {
  if (tty_) fmt::print(out_, "\r\033[2K");
  std::fflush(out_);
}

}  // namespace lrb
