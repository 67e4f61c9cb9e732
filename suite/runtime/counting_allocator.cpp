#include "suite/runtime/counting_allocator.h"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>

#include <mutex>

namespace lrb {
namespace {

std::atomic<std::int64_t> g_live{0};
std::atomic<std::int64_t> g_peak{0};
std::atomic<std::int64_t> g_count{0};
std::atomic<std::int64_t> g_limit{0};
std::atomic<bool> g_hit{false};
std::atomic<bool> g_installed{false};

struct Block {
  void* ptr;
  std::int64_t bytes;
  c10::DataPtr inner;  // the default allocator's pointer, freed with its own deleter
};

void note_peak(std::int64_t now) {
  std::int64_t prev = g_peak.load(std::memory_order_relaxed);
  while (now > prev && !g_peak.compare_exchange_weak(prev, now, std::memory_order_relaxed)) {
  }
}

class CountingAllocator final : public c10::Allocator {
 public:
  explicit CountingAllocator(c10::Allocator* inner) : inner_(inner) {}

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
    c10::DataPtr inner;
    try {
      inner = inner_->allocate(n);
    } catch (...) {
      g_live.fetch_sub(bytes, std::memory_order_relaxed);
      throw;
    }
    void* data = inner.get();
    auto* block = new Block{data, bytes, std::move(inner)};
    return c10::DataPtr(data, block, &CountingAllocator::free_block, c10::Device(c10::DeviceType::CPU));
  }

  c10::DeleterFnPtr raw_deleter() const override { return nullptr; }

 private:
  static void free_block(void* ctx) {
    auto* block = static_cast<Block*>(ctx);
    g_live.fetch_sub(block->bytes, std::memory_order_relaxed);
    delete block;
  }
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
