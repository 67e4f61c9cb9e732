#pragma once
// Peak memory on an accelerator, from the CUDA caching allocator's own statistics (CPU
// tensors are counted by the counting allocator). Without a CUDA build of LibTorch
// (LRB_WITH_CUDA off) there is no device to ask: the functions say so.
#include <c10/core/Device.h>

#include <cstdint>
#include <exception>

namespace lrb {

// Starts a fresh peak window on `device` (no-op on the CPU).
void reset_device_peak(const c10::Device& device);
// Peak bytes allocated on `device` since the last reset; -1 when unknown (CPU, or no CUDA).
std::int64_t device_peak_bytes(const c10::Device& device);
// Frees the caching allocator's unused blocks (after an out-of-memory probe).
void release_device_cache(const c10::Device& device);
// An accelerator's own "out of memory" (its limit, not lrbench's budget).
bool is_device_out_of_memory(const std::exception& e);

}  // namespace lrb
