#pragma once
// A counting CPU allocator installed as LibTorch's CPU allocator: it tracks live and peak
// bytes of every CPU tensor, and can refuse allocations past a budget (the run then fails
// with a "memory budget exceeded" reason instead of the machine swapping).
#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace lrb {

// Thrown from inside a LibTorch operation when an allocation would pass the budget.
class MemoryBudgetExceeded : public std::bad_alloc {
 public:
  MemoryBudgetExceeded(std::int64_t requested, std::int64_t live, std::int64_t budget);
  const char* what() const noexcept override { return message_.c_str(); }
  std::int64_t requested, live, budget;

 private:
  std::string message_;
};

class CpuMemoryCounter {
 public:
  // Installs the counting allocator (idempotent). Call before creating tensors whose memory
  // should be counted; tensors made earlier keep their own deleters and are not counted.
  static void install();
  static bool installed();

  // Live and peak bytes count the blocks allocated in the current scope. A new scope
  // (one per run) starts from zero, and freeing blocks of earlier scopes (cached data,
  // a library's cached buffers) leaves its figures alone.
  static void begin_scope();
  static std::int64_t live_bytes();
  static std::int64_t peak_bytes();
  static std::int64_t allocations();
  // Restarts peak tracking from the current live bytes.
  static void reset_peak();
  // Allocations that would take the scope's live bytes above `limit` throw MemoryBudgetExceeded;
  // 0 removes the limit. A refused allocation sets budget_hit().
  static void set_limit(std::int64_t limit_bytes);
  static std::int64_t limit();
  static bool budget_hit();
  // Returns the heap's free memory to the system (malloc_trim): between the steps of a
  // batch search, so that the process holds about what the counts say and not the sum of
  // every step's fragments.
  static void release_free_memory();
  static void clear_budget_hit();
};

// Sets a peak window for a scope: the peak inside it, relative to the live bytes at entry.
// Scopes nest: on leaving, the enclosing window's peak is put back (the larger of what it
// was at entry and what was reached inside), so a model can measure one module inside the
// runner's measurement of the whole step.
class PeakScope {
 public:
  PeakScope();
  ~PeakScope();
  PeakScope(const PeakScope&) = delete;
  PeakScope& operator=(const PeakScope&) = delete;
  std::int64_t base() const { return base_; }
  std::int64_t peak_above_base() const;

 private:
  std::int64_t base_;
  std::int64_t enclosing_peak_;
};

}  // namespace lrb
