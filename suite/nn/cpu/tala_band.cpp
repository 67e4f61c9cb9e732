#include "suite/nn/cpu/tala_band.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/record_function.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <atomic>

#include "suite/core/errors.h"
#include "suite/nn/batched_matmul.h"
#include "suite/nn/cpu/simd.h"

namespace lrb {
namespace {

using index_t = std::int64_t;

std::atomic<bool> force_general{false};

// a . b over n elements, in eight independent sums (so that the compiler keeps them in one
// vector without reordering a single sum), then added up.
template <typename T>
LRB_INLINE T dot(const T* __restrict a, const T* __restrict b, index_t n) {
  T lanes[8] = {};
  index_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l) lanes[l] += a[i + l] * b[i + l];
  T s = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
  for (; i < n; ++i) s += a[i] * b[i];
  return s;
}

template <typename T>
LRB_INLINE void axpy(T a, const T* __restrict x, T* __restrict y, index_t n) {
  for (index_t i = 0; i < n; ++i) y[i] += a * x[i];
}

// One head: rows of q, k [N, d], v [N, dv], out [N, dv] (zeroed), c [w].
template <typename T>
struct BandHead {
  const T *q, *k, *v, *c;
  index_t n, d, dv, w;
};

template <typename T>
LRB_INLINE void forward_head(const BandHead<T>& a, T* __restrict out) {
  for (index_t i = 0; i < a.n; ++i) {
    T* o = out + i * a.dv;
    const T* qi = a.q + i * a.d;
    for (index_t delta = 0; delta < a.w && delta <= i; ++delta) {
      const index_t m = i - delta;
      axpy(a.c[delta] * dot(qi, a.k + m * a.d, a.d), a.v + m * a.dv, o, a.dv);
    }
  }
}

// The backward of one head: g [N, dv] the output's gradient; dq, dk [N, d], dv [N, dv] and
// dc [w] zeroed and accumulated. Per pair: s = q.k, t = g.v; dq += c t k, dk += c t q,
// dv += c s g, dc += s t.
template <typename T>
LRB_INLINE void backward_head(const BandHead<T>& a, const T* __restrict g, T* __restrict dq, T* __restrict dk,
                              T* __restrict dv, T* __restrict dc) {
  for (index_t i = 0; i < a.n; ++i) {
    const T* qi = a.q + i * a.d;
    const T* gi = g + i * a.dv;
    T* dqi = dq + i * a.d;
    for (index_t delta = 0; delta < a.w && delta <= i; ++delta) {
      const index_t m = i - delta;
      const T* km = a.k + m * a.d;
      const T s = dot(qi, km, a.d), t = dot(gi, a.v + m * a.dv, a.dv);
      const T ct = a.c[delta] * t;
      axpy(ct, km, dqi, a.d);
      axpy(ct, qi, dk + m * a.d, a.d);
      axpy(a.c[delta] * s, gi, dv + m * a.dv, a.dv);
      dc[delta] += s * t;
    }
  }
}

// Compiled for AVX2 and the baseline x86-64, the copy simd_level() names taken; both round
// alike (no FMA).
LRB_SIMD_EXACT_DISPATCH(forward_head_any, forward_head)
LRB_SIMD_EXACT_DISPATCH(backward_head_any, backward_head)

// Operands as the loops read them: contiguous, c one row of w per head.
struct Operands {
  at::Tensor q, k, v, c;
  index_t B, H, N, d, dv, w;
};

Operands operands(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& c) {
  return {q.contiguous(), k.contiguous(), v.contiguous(), c.contiguous(), q.size(0), q.size(1), q.size(2), q.size(3),
          v.size(3),      c.size(1)};
}

template <typename T>
BandHead<T> head(const Operands& o, index_t bh) {
  const index_t h = bh % o.H;
  return {o.q.data_ptr<T>() + bh * o.N * o.d, o.k.data_ptr<T>() + bh * o.N * o.d, o.v.data_ptr<T>() + bh * o.N * o.dv,
          o.c.data_ptr<T>() + h * o.w, o.N, o.d, o.dv, o.w};
}

at::Tensor forward_all(const Operands& o) {
  at::Tensor out = at::zeros({o.B, o.H, o.N, o.dv}, o.q.options());
  AT_DISPATCH_FLOATING_TYPES(o.q.scalar_type(), "tala_band_forward", [&] {
    at::parallel_for(0, o.B * o.H, 1, [&](index_t begin, index_t end) {
      for (index_t bh = begin; bh < end; ++bh)
        forward_head_any(head<scalar_t>(o, bh), out.data_ptr<scalar_t>() + bh * o.N * o.dv);
    });
  });
  return out;
}

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct FusedBandFunction : public torch::autograd::Function<FusedBandFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                            const at::Tensor& c) {
    const Operands o = operands(q, k, v, c);
    ctx->save_for_backward({o.q, o.k, o.v, o.c});
    return forward_all(o);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const Operands o = operands(saved[0], saved[1], saved[2], saved[3]);
    const at::Tensor g = grads[0].to(o.q.scalar_type()).contiguous();
    at::Tensor dq = at::zeros_like(o.q), dk = at::zeros_like(o.k), dv = at::zeros_like(o.v);
    // One row of w per batch element and head (threads never share one), summed over the batch.
    at::Tensor dc = at::zeros({o.B, o.H, o.w}, o.c.options());
    AT_DISPATCH_FLOATING_TYPES(o.q.scalar_type(), "tala_band_backward", [&] {
      at::parallel_for(0, o.B * o.H, 1, [&](index_t begin, index_t end) {
        for (index_t bh = begin; bh < end; ++bh)
          backward_head_any(head<scalar_t>(o, bh), g.data_ptr<scalar_t>() + bh * o.N * o.dv,
                            dq.data_ptr<scalar_t>() + bh * o.N * o.d, dk.data_ptr<scalar_t>() + bh * o.N * o.d,
                            dv.data_ptr<scalar_t>() + bh * o.N * o.dv, dc.data_ptr<scalar_t>() + bh * o.w);
      });
    });
    return {dq, dk, dv, dc.sum(0)};
  }
};

}  // namespace

bool tala_band_fused_applies(const at::Tensor& q) {
  if (force_general.load(std::memory_order_relaxed) || cpu_autocast_active()) return false;
  return q.defined() && q.device().is_cpu() && q.layout() == at::kStrided &&
         (q.scalar_type() == at::kFloat || q.scalar_type() == at::kDouble) && q.dim() == 4;
}

at::Tensor tala_band_fused(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& c) {
  LRB_CHECK(tala_band_fused_applies(q), "tala_band_fused: operands outside its fast path");
  for (const at::Tensor* x : {&k, &v, &c})
    LRB_CHECK(x->device().is_cpu() && x->layout() == at::kStrided && x->scalar_type() == q.scalar_type() &&
                  !x->is_neg() && !x->is_conj(),
              "tala_band_fused: k, v and c must be strided CPU tensors of q's type");
  LRB_CHECK(!q.is_neg() && !q.is_conj() && k.sizes() == q.sizes() && v.dim() == 4 && v.size(0) == q.size(0) &&
                v.size(1) == q.size(1) && v.size(2) == q.size(2) && c.dim() == 2 && c.size(0) == q.size(1),
            "tala_band_fused: q, k [B, H, N, d], v [B, H, N, dv], c [H, w]");
  // Named in LibTorch's profiler (a custom function's forward is not an op of its own).
  RECORD_FUNCTION("lrb::tala_band", std::vector<c10::IValue>({q, k, v, c}));
  if (at::GradMode::is_enabled() && (q.requires_grad() || k.requires_grad() || v.requires_grad() || c.requires_grad()))
    return FusedBandFunction::apply(q, k, v, c);
  return forward_all(operands(q, k, v, c));
}

std::int64_t tala_band_fused_score_elements(std::int64_t batch, std::int64_t heads, std::int64_t tokens,
                                            std::int64_t window) {
  const std::int64_t w = std::min(window, tokens);
  return batch * heads * (tokens * w - w * (w - 1) / 2);
}

bool tala_band_use_general_path(bool general) { return force_general.exchange(general); }

}  // namespace lrb
