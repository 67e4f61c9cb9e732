#pragma once
// Peak memory on an accelerator, from the CUDA caching allocator's own statistics (CPU
// tensors are counted by the counting allocator). Without a CUDA build of LibTorch
// (LRB_WITH_CUDA off) there is no device to ask: the functions say so.
#include <c10/core/Device.h>

#include <cstdint>
#include <exception>
#include <string>

namespace lrb {

// Starts a fresh peak window on `device` (no-op on the CPU).
void reset_device_peak(const c10::Device& device);
// Peak bytes allocated on `device` since the last reset; -1 when unknown (CPU, or no CUDA).
std::int64_t device_peak_bytes(const c10::Device& device);
// Bytes allocated on `device` now; -1 when unknown.
std::int64_t device_live_bytes(const c10::Device& device);
// The device's total memory; -1 when unknown.
std::int64_t device_total_bytes(const c10::Device& device);
// Caps what the caching allocator may hold on `device` (0: no cap): past it an allocation
// fails with the device's own "out of memory", as on a smaller GPU. The cap is a fraction
// of the device's memory, so it is exact to the allocator's rounding.
void set_device_memory_limit(const c10::Device& device, std::int64_t bytes);
// Frees the caching allocator's unused blocks (after an out-of-memory probe).
void release_device_cache(const c10::Device& device);
// An accelerator's own "out of memory" (its limit, not lrbench's budget).
bool is_device_out_of_memory(const std::exception& e);

// The run's memory figures, from whichever counter sees its tensors: the counting
// allocator on the CPU, the caching allocator on a GPU.
std::int64_t run_live_bytes(const c10::Device& device);
std::int64_t run_peak_bytes(const c10::Device& device);
void run_reset_peak(const c10::Device& device);
// Names that counter, for provenance.
std::string run_memory_source(const c10::Device& device);

}  // namespace lrb
