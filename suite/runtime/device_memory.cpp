#include "suite/runtime/device_memory.h"

#include <c10/util/Exception.h>

#include <cstring>

#ifdef LRB_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

namespace lrb {

void reset_device_peak(const c10::Device& device) {
#ifdef LRB_WITH_CUDA
  if (device.is_cuda()) c10::cuda::CUDACachingAllocator::resetPeakStats(device.index());
#else
  (void)device;
#endif
}

std::int64_t device_peak_bytes(const c10::Device& device) {
#ifdef LRB_WITH_CUDA
  if (device.is_cuda()) {
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.index());
    return stats.allocated_bytes[static_cast<std::size_t>(c10::cuda::CUDACachingAllocator::StatType::AGGREGATE)].peak;
  }
#else
  (void)device;
#endif
  return -1;
}

void release_device_cache(const c10::Device& device) {
#ifdef LRB_WITH_CUDA
  if (device.is_cuda()) c10::cuda::CUDACachingAllocator::emptyCache();
#else
  (void)device;
#endif
}

bool is_device_out_of_memory(const std::exception& e) {
  // LibTorch reports a CUDA allocation failure as a c10::Error whose message starts with
  // "CUDA out of memory" (c10::OutOfMemoryError in later releases).
  const auto* c10e = dynamic_cast<const c10::Error*>(&e);
  return c10e && std::strstr(c10e->what_without_backtrace(), "out of memory") != nullptr;
}

}  // namespace lrb
