#include "suite/nn/dropout.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <ATen/record_function.h>
#include <ATen/core/PhiloxRNGEngine.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <type_traits>

#include "suite/core/errors.h"

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

// Philox4x32-10 costs ~3 ns an element here (its rounds are scalar 32-bit products): half of
// LibTorch 1.13's Bernoulli draw, which also writes a float mask.
template <typename scalar_t>
void draw_and_apply(const scalar_t* x, scalar_t* out, std::uint8_t* mask, index_t n, std::uint64_t key,
                    std::uint64_t threshold, double scale_value) {
  const auto scale = static_cast<scale_t<scalar_t>>(scale_value);
  at::parallel_for(0, (n + kGroup - 1) / kGroup, 2048, [&](index_t g_begin, index_t g_end) {
    at::philox_engine draws(key, 0, static_cast<std::uint64_t>(g_begin));
    const index_t end = std::min(n, g_end * kGroup);
    for (index_t i = g_begin * kGroup; i < end; ++i) {
      const bool keep = draws() < threshold;
      mask[i] = keep;
      out[i] = keep ? static_cast<scalar_t>(static_cast<scale_t<scalar_t>>(x[i]) * scale) : scalar_t(0);
    }
  });
}

template <typename scalar_t>
void apply_mask(const scalar_t* grad, const std::uint8_t* mask, scalar_t* out, index_t n, double scale_value) {
  const auto scale = static_cast<scale_t<scalar_t>>(scale_value);
  at::parallel_for(0, n, 8192, [&](index_t begin, index_t end) {
    for (index_t i = begin; i < end; ++i)
      out[i] = mask[i] ? static_cast<scalar_t>(static_cast<scale_t<scalar_t>>(grad[i]) * scale) : scalar_t(0);
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
