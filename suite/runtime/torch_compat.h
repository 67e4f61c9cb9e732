#pragma once
// What differs between the LibTorch releases lrbench builds against — Debian 12's 1.13,
// Debian 13's 2.6 and PyTorch's CUDA 2.x — each difference once, here, by name; the rest of
// the code uses these and carries no version test of its own.
#include <c10/core/Allocator.h>
#include <torch/version.h>

#include <cstddef>

namespace lrb::torch_compat {

// c10::Allocator: allocate() is const in 1.x and not in 2.x, and 2.x adds the pure virtual
// copy_data(). Derive from this and implement allocate_block().
class AllocatorBase : public c10::Allocator {
 public:
  virtual c10::DataPtr allocate_block(std::size_t n) const = 0;
#if TORCH_VERSION_MAJOR >= 2
  c10::DataPtr allocate(std::size_t n) override { return allocate_block(n); }
  // A plain host allocator's blocks copy as bytes (what LibTorch's own CPU allocator does).
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }
#else
  c10::DataPtr allocate(std::size_t n) const override { return allocate_block(n); }
#endif
};

}  // namespace lrb::torch_compat
