#pragma once
// The CUDA half of torch_compat.h: what differs between LibTorch releases in the CUDA
// caching allocator's interface. Included only by sources built with LRB_WITH_CUDA.
#include <c10/cuda/CUDACachingAllocator.h>

#include <cstddef>

#if __has_include(<c10/core/CachingDeviceAllocator.h>)
#include <c10/core/CachingDeviceAllocator.h>
#endif

namespace lrb::torch_compat {

// The statistics' "all pools" slot: c10::cuda::CUDACachingAllocator::StatType up to 2.4,
// c10::CachingDeviceAllocator::StatType from 2.5 on.
#if __has_include(<c10/core/CachingDeviceAllocator.h>)
inline constexpr std::size_t kAggregateStat =
    static_cast<std::size_t>(c10::CachingDeviceAllocator::StatType::AGGREGATE);
#else
inline constexpr std::size_t kAggregateStat =
    static_cast<std::size_t>(c10::cuda::CUDACachingAllocator::StatType::AGGREGATE);
#endif

}  // namespace lrb::torch_compat
