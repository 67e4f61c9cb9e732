#include "suite/runtime/counting_allocator.h"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>

#include <mutex>

#include "suite/core/errors.h"

namespace lrb {
namespace {

std::atomic<std::int64_t> g_live{0};
std::atomic<std::int64_t> g_peak{0};
std::atomic<std::int64_t> g_count{0};
std::atomic<std::int64_t> g_limit{0};
std::atomic<bool> g_hit{false};
std::atomic<bool> g_installed{false};

// Each block carries its size in a header in front of the data, so the DataPtr's data and
// context are the same pointer and raw_deleter() works: some LibTorch ops (MKL-DNN
// convolution, for one) allocate through Allocator::raw_allocate, which requires both.
// 64 bytes keep the default allocator's 64-byte alignment.
constexpr std::size_t kHeader = 64;
c10::DeleterFnPtr g_inner_deleter = nullptr;

void note_peak(std::int64_t now) {
  std::int64_t prev = g_peak.load(std::memory_order_relaxed);
  while (now > prev && !g_peak.compare_exchange_weak(prev, now, std::memory_order_relaxed)) {
  }
}

void free_block(void* data) {
  if (data == nullptr) return;
  void* base = static_cast<char*>(data) - kHeader;
  g_live.fetch_sub(*static_cast<std::int64_t*>(base), std::memory_order_relaxed);
  g_inner_deleter(base);
}

class CountingAllocator final : public c10::Allocator {
 public:
  explicit CountingAllocator(c10::Allocator* inner) : inner_(inner) {
    g_inner_deleter = inner->raw_deleter();
    LRB_CHECK(g_inner_deleter != nullptr, "the default CPU allocator must support raw allocations");
  }

  c10::DataPtr allocate(size_t n) const override {
    const auto bytes = static_cast<std::int64_t>(n);
    const std::int64_t now = g_live.fetch_add(bytes, std::memory_order_relaxed) + bytes;
    const std::int64_t limit = g_limit.load(std::memory_order_relaxed);
    if (limit > 0 && now > limit) {
      g_live.fetch_sub(bytes, std::memory_order_relaxed);
      g_hit = true;
      throw MemoryBudgetExceeded(bytes, now - bytes, limit);
    }
    note_peak(now);
    g_count.fetch_add(1, std::memory_order_relaxed);
    void* base = nullptr;
    try {
      base = inner_->raw_allocate(n + kHeader);
    } catch (...) {
      g_live.fetch_sub(bytes, std::memory_order_relaxed);
      throw;
    }
    *static_cast<std::int64_t*>(base) = bytes;
    void* data = static_cast<char*>(base) + kHeader;
    return c10::DataPtr(data, data, &free_block, c10::Device(c10::DeviceType::CPU));
  }

  c10::DeleterFnPtr raw_deleter() const override { return &free_block; }

 private:
  c10::Allocator* inner_;
};

}  // namespace

MemoryBudgetExceeded::MemoryBudgetExceeded(std::int64_t req, std::int64_t lv, std::int64_t bud)
    : requested(req), live(lv), budget(bud) {
  message_ = "memory budget exceeded: an allocation of " + std::to_string(req) + " bytes with " +
             std::to_string(lv) + " bytes live would pass the budget of " + std::to_string(bud) + " bytes";
}

void CpuMemoryCounter::install() {
  static std::once_flag once;
  std::call_once(once, [] {
    static CountingAllocator allocator(c10::GetDefaultCPUAllocator());
    // Priority above the default's so later registrations at priority 0 cannot replace it.
    c10::SetCPUAllocator(&allocator, /*priority=*/100);
    g_installed = true;
  });
}

bool CpuMemoryCounter::installed() { return g_installed; }
std::int64_t CpuMemoryCounter::live_bytes() { return g_live.load(); }
std::int64_t CpuMemoryCounter::peak_bytes() { return g_peak.load(); }
std::int64_t CpuMemoryCounter::allocations() { return g_count.load(); }
void CpuMemoryCounter::reset_peak() { g_peak = g_live.load(); }
void CpuMemoryCounter::set_limit(std::int64_t limit_bytes) { g_limit = limit_bytes; }
std::int64_t CpuMemoryCounter::limit() { return g_limit.load(); }
bool CpuMemoryCounter::budget_hit() { return g_hit.load(); }
void CpuMemoryCounter::clear_budget_hit() { g_hit = false; }

PeakScope::PeakScope() : base_(CpuMemoryCounter::live_bytes()) { CpuMemoryCounter::reset_peak(); }
std::int64_t PeakScope::peak_above_base() const { return CpuMemoryCounter::peak_bytes() - base_; }

}  // namespace lrb
