#include "suite/runtime/device_memory.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <cstring>

#include "suite/runtime/counting_allocator.h"

#ifdef LRB_WITH_CUDA
#include <ATen/ops/empty.h>
#include <c10/core/TensorOptions.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <cuda_runtime_api.h>

#include <mutex>

#include "suite/runtime/torch_compat_cuda.h"
#endif

namespace lrb {

#ifdef LRB_WITH_CUDA
namespace {
// The caching allocator keeps no statistics until CUDA is initialised, which LibTorch does
// at the first tensor made on a GPU; before that, reading or resetting them throws ("Invalid
// device argument"). A run reads them before it allocates anything (its live bytes at the
// start), and the process's first run may find nothing initialised (seen on an H200 when the
// matmul peak came from the cache), so the first use makes a one-element tensor there.
c10::DeviceIndex initialised_index(const c10::Device& device) {
  static std::once_flag once;
  std::call_once(once, [&] { (void)at::empty({1}, c10::TensorOptions().device(device)); });
  return device.has_index() ? device.index() : c10::cuda::current_device();
}

c10::cuda::CUDACachingAllocator::DeviceStats stats_of(const c10::Device& device) {
  return c10::cuda::CUDACachingAllocator::getDeviceStats(initialised_index(device));
}
}  // namespace
#endif

void reset_device_peak(const c10::Device& device) {
#ifdef LRB_WITH_CUDA
  if (device.is_cuda()) c10::cuda::CUDACachingAllocator::resetPeakStats(initialised_index(device));
#else
  (void)device;
#endif
}

std::int64_t device_peak_bytes(const c10::Device& device) {
#ifdef LRB_WITH_CUDA
  if (device.is_cuda()) return stats_of(device).allocated_bytes[torch_compat::kAggregateStat].peak;
#else
  (void)device;
#endif
  return -1;
}

std::int64_t device_live_bytes(const c10::Device& device) {
#ifdef LRB_WITH_CUDA
  if (device.is_cuda()) return stats_of(device).allocated_bytes[torch_compat::kAggregateStat].current;
#else
  (void)device;
#endif
  return -1;
}

std::int64_t device_total_bytes(const c10::Device& device) {
#ifdef LRB_WITH_CUDA
  if (device.is_cuda()) {
    std::size_t free = 0, total = 0;
    if (cudaMemGetInfo(&free, &total) == cudaSuccess) return static_cast<std::int64_t>(total);
  }
#else
  (void)device;
#endif
  return -1;
}

void set_device_memory_limit(const c10::Device& device, std::int64_t bytes) {
#ifdef LRB_WITH_CUDA
  if (!device.is_cuda()) return;
  const std::int64_t total = device_total_bytes(device);
  const double fraction = bytes <= 0 || total <= 0 ? 1.0 : std::min(1.0, static_cast<double>(bytes) / static_cast<double>(total));
  c10::cuda::CUDACachingAllocator::setMemoryFraction(fraction, initialised_index(device));
#else
  (void)device;
  (void)bytes;
#endif
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

std::int64_t run_live_bytes(const c10::Device& device) {
  return device.is_cuda() ? device_live_bytes(device) : CpuMemoryCounter::live_bytes();
}
std::int64_t run_peak_bytes(const c10::Device& device) {
  return device.is_cuda() ? device_peak_bytes(device) : CpuMemoryCounter::peak_bytes();
}
void run_reset_peak(const c10::Device& device) {
  if (device.is_cuda()) reset_device_peak(device);
  else CpuMemoryCounter::reset_peak();
}
std::string run_memory_source(const c10::Device& device) {
  return device.is_cuda() ? "CUDA caching allocator (allocated bytes)" : "lrbench counting CPU allocator";
}

}  // namespace lrb
