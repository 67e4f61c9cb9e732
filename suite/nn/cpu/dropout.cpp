#include "suite/nn/cpu/dropout.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <ATen/record_function.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <type_traits>

#include "suite/core/errors.h"
#include "suite/nn/cpu/philox_blocks.h"
#include "suite/nn/cpu/simd.h"

namespace lrb {
namespace {

using index_t = std::int64_t;


// Element i takes the (i mod 4)-th output of the Philox block at counter i / 4, so the mask
// does not depend on how the parallel loop is chunked.
constexpr index_t kGroup = 4;

std::uint64_t draw_key() {
  auto* gen = at::detail::getDefaultCPUGenerator().get<at::CPUGeneratorImpl>();
  std::lock_guard<std::mutex> lock(gen->mutex_);
  return gen->random64();
}

// Keep where the element's 32-bit draw is below (1 - p) 2^32.
std::uint64_t keep_threshold(double p) {
  return static_cast<std::uint64_t>(std::llround(std::ldexp(1.0 - p, 32)));
}

// The scaling's arithmetic: double for double, float for float and bfloat16.
template <typename scalar_t>
using scale_t = std::conditional_t<std::is_same_v<scalar_t, double>, double, float>;

// Blocks drawn per tile: 1,024 draws (4 KiB) on the stack, then applied.
constexpr index_t kTileBlocks = 256;

// v where keep is 1, +0 where it is 0: through v's bits, a form GCC vectorises (it leaves a
// `keep ? v : 0` over bytes scalar and branching); the same values as that select.
template <typename scalar_t>
LRB_INLINE scalar_t keep_or_zero(scalar_t v, std::uint32_t keep) {
  using bits_t = std::conditional_t<sizeof(scalar_t) == 8, std::uint64_t,
                                    std::conditional_t<sizeof(scalar_t) == 4, std::uint32_t, std::uint16_t>>;
  static_assert(sizeof(bits_t) == sizeof(scalar_t));
  bits_t b;
  std::memcpy(&b, &v, sizeof b);
  b &= static_cast<bits_t>(0) - static_cast<bits_t>(keep);
  std::memcpy(&v, &b, sizeof b);
  return v;
}

// Element i kept where its draw is below `below` (or every one, keep_all): its mask byte and
// its scaled value.
template <typename scalar_t>
LRB_INLINE void apply_draws_of(const std::uint32_t* __restrict draws, const scalar_t* __restrict x,
                               scalar_t* __restrict out, std::uint8_t* __restrict mask, index_t n, bool keep_all,
                               std::uint32_t below, scale_t<scalar_t> scale) {
  for (index_t i = 0; i < n; ++i) {
    const std::uint32_t keep = keep_all | (draws[i] < below);
    mask[i] = static_cast<std::uint8_t>(keep);
    out[i] = keep_or_zero(static_cast<scalar_t>(static_cast<scale_t<scalar_t>>(x[i]) * scale), keep);
  }
}

LRB_SIMD_EXACT_DISPATCH(apply_draws, apply_draws_of)

// Philox4x32-10 one block at a time cost ~3 ns an element here (its rounds are scalar 32-bit
// products); philox_blocks draws eight blocks at once in AVX2 registers, the same values.
template <typename scalar_t>
void draw_and_apply(const scalar_t* x, scalar_t* out, std::uint8_t* mask, index_t n, std::uint64_t key,
                    std::uint64_t threshold, double scale_value) {
  const auto scale = static_cast<scale_t<scalar_t>>(scale_value);
  // draw < threshold, in 32 bits: threshold is at most 2^32 (every draw kept).
  const bool keep_all = threshold > 0xFFFFFFFFu;
  const auto below = static_cast<std::uint32_t>(threshold);
  at::parallel_for(0, (n + kGroup - 1) / kGroup, 2048, [&](index_t g_begin, index_t g_end) {
    std::uint32_t draws[kTileBlocks * kGroup];
    for (index_t tile = g_begin; tile < g_end; tile += kTileBlocks) {
      const index_t blocks = std::min(kTileBlocks, g_end - tile);
      philox_blocks(key, static_cast<std::uint64_t>(tile), blocks, draws);
      const index_t first = tile * kGroup, end = std::min(n, (tile + blocks) * kGroup);
      apply_draws(draws, x + first, out + first, mask + first, end - first, keep_all, below, scale);
    }
  });
}

template <typename scalar_t>
LRB_INLINE void apply_mask_range_of(const scalar_t* __restrict grad, const std::uint8_t* __restrict mask,
                                    scalar_t* __restrict out, index_t n, scale_t<scalar_t> scale) {
  for (index_t i = 0; i < n; ++i)
    out[i] = keep_or_zero(static_cast<scalar_t>(static_cast<scale_t<scalar_t>>(grad[i]) * scale), mask[i]);
}

LRB_SIMD_EXACT_DISPATCH(apply_mask_range, apply_mask_range_of)

template <typename scalar_t>
void apply_mask(const scalar_t* grad, const std::uint8_t* mask, scalar_t* out, index_t n, double scale_value) {
  const auto scale = static_cast<scale_t<scalar_t>>(scale_value);
  at::parallel_for(0, n, 8192, [&](index_t begin, index_t end) {
    apply_mask_range(grad + begin, mask + begin, out + begin, end - begin, scale);
  });
}

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct PhiloxDropout : public torch::autograd::Function<PhiloxDropout> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& input, double p) {
    const at::Tensor x = input.contiguous();
    at::Tensor out = at::empty_like(x, at::MemoryFormat::Contiguous);
    // One byte per element, through the allocator the run counts.
    at::Tensor mask = at::empty(x.sizes(), x.options().dtype(at::kByte));
    const double scale = 1.0 / (1.0 - p);
    const std::uint64_t key = draw_key(), threshold = keep_threshold(p);
    AT_DISPATCH_FLOATING_TYPES_AND(at::kBFloat16, x.scalar_type(), "lrb_dropout", [&] {
      draw_and_apply(x.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(), mask.data_ptr<std::uint8_t>(), x.numel(), key,
                     threshold, scale);
    });
    ctx->save_for_backward({mask});
    ctx->saved_data["scale"] = scale;
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const at::Tensor mask = ctx->get_saved_variables()[0];
    const double scale = ctx->saved_data["scale"].toDouble();
    const at::Tensor grad = grads[0].contiguous();
    at::Tensor out = at::empty_like(grad, at::MemoryFormat::Contiguous);
    AT_DISPATCH_FLOATING_TYPES_AND(at::kBFloat16, grad.scalar_type(), "lrb_dropout_backward", [&] {
      apply_mask(grad.data_ptr<scalar_t>(), mask.data_ptr<std::uint8_t>(), out.data_ptr<scalar_t>(), grad.numel(),
                 scale);
    });
    return {out, at::Tensor()};
  }
};

bool philox_path_applies(const at::Tensor& x) {
  const auto t = x.scalar_type();
  return x.device().is_cpu() && x.layout() == at::kStrided && (t == at::kFloat || t == at::kBFloat16 || t == at::kDouble);
}

}  // namespace

at::Tensor dropout(const at::Tensor& x, double p, bool training) {
  LRB_CHECK(p >= 0.0 && p <= 1.0, "dropout: p must lie in [0, 1]");
  if (!training || p == 0.0) return x;
  if (p == 1.0) return x * 0;
  if (!philox_path_applies(x)) return at::dropout(x, p, true);
  RECORD_FUNCTION("lrb::dropout", std::vector<c10::IValue>({x}));  // for the profiler
  return PhiloxDropout::apply(x, p);
}

DropoutImpl::DropoutImpl(double p) : p(p) {}

at::Tensor DropoutImpl::forward(const at::Tensor& x) { return lrb::dropout(x, p, is_training()); }

}  // namespace lrb
