#include "suite/runtime/counting_allocator.h"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/impl/alloc_cpu.h>
#include <malloc.h>

#include <mutex>

#include "suite/runtime/torch_compat.h"

namespace lrb {
namespace {

std::atomic<std::int64_t> g_live{0};
std::atomic<std::int64_t> g_peak{0};
std::atomic<std::int64_t> g_count{0};
std::atomic<std::int64_t> g_limit{0};
std::atomic<bool> g_hit{false};
std::atomic<bool> g_installed{false};

void note_peak(std::int64_t now) {
  std::int64_t prev = g_peak.load(std::memory_order_relaxed);
  while (now > prev && !g_peak.compare_exchange_weak(prev, now, std::memory_order_relaxed)) {
  }
}

// Each block carries a 64-byte header (keeping LibTorch's 64-byte alignment) with its size
// and the scope it was allocated in. The data pointer is its own context, as LibTorch's
// raw_allocate() requires (MKL-DNN convolutions use it).
struct alignas(64) Header {
  std::int64_t bytes;
  std::uint64_t scope;
};
static_assert(sizeof(Header) == 64, "the header must keep 64-byte alignment");

std::atomic<std::uint64_t> g_scope{0};

void free_counted(void* data) {
  if (!data) return;
  Header* h = static_cast<Header*>(data) - 1;
  // Blocks of an earlier scope (a cached dataset, a library's cached buffer) were never
  // counted in this one: freeing them must not lower its figures.
  if (h->scope == g_scope.load(std::memory_order_relaxed)) g_live.fetch_sub(h->bytes, std::memory_order_relaxed);
  c10::free_cpu(h);
}

class CountingAllocator final : public torch_compat::AllocatorBase {
 public:
  c10::DataPtr allocate_block(size_t n) const override {
    const auto bytes = static_cast<std::int64_t>(n);
    const std::int64_t limit = g_limit.load(std::memory_order_relaxed);
    if (limit > 0) {
      const std::int64_t live = g_live.load(std::memory_order_relaxed);
      if (live + bytes > limit) {
        g_hit = true;
        throw MemoryBudgetExceeded(bytes, live, limit);
      }
    }
    auto* h = static_cast<Header*>(c10::alloc_cpu(n + sizeof(Header)));
    h->bytes = bytes;
    h->scope = g_scope.load(std::memory_order_relaxed);
    note_peak(g_live.fetch_add(bytes, std::memory_order_relaxed) + bytes);
    g_count.fetch_add(1, std::memory_order_relaxed);
    void* data = h + 1;
    return c10::DataPtr(data, data, &free_counted, c10::Device(c10::DeviceType::CPU));
  }

  c10::DeleterFnPtr raw_deleter() const override { return &free_counted; }
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
    // glibc's threshold for serving a block with mmap adapts upwards as blocks are freed,
    // and blocks served by mmap pay page faults on every allocation (measured: half the
    // run time in the kernel for a small Transformer). A fixed 64 MiB threshold keeps the
    // typical activation in the heap and still returns large blocks to the system at
    // once: with a larger threshold, a batch search's ever larger steps leave freed heap
    // blocks that cannot be reused, and the process grows far past its counted budget.
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    static CountingAllocator allocator;
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
void CpuMemoryCounter::begin_scope() {
  g_scope.fetch_add(1);
  g_live = 0;
  g_peak = 0;
}
void CpuMemoryCounter::set_limit(std::int64_t limit_bytes) { g_limit = limit_bytes; }
std::int64_t CpuMemoryCounter::limit() { return g_limit.load(); }
bool CpuMemoryCounter::budget_hit() { return g_hit.load(); }
void CpuMemoryCounter::release_free_memory() { malloc_trim(0); }
void CpuMemoryCounter::clear_budget_hit() { g_hit = false; }

PeakScope::PeakScope() : base_(CpuMemoryCounter::live_bytes()), enclosing_peak_(CpuMemoryCounter::peak_bytes()) {
  CpuMemoryCounter::reset_peak();
}
PeakScope::~PeakScope() { note_peak(enclosing_peak_); }
std::int64_t PeakScope::peak_above_base() const { return CpuMemoryCounter::peak_bytes() - base_; }

}  // namespace lrb
