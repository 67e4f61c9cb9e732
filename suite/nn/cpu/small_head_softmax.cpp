#include "suite/nn/cpu/small_head_softmax.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/record_function.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "suite/core/errors.h"
#include "suite/nn/batched_matmul.h"
#include "suite/nn/cpu/simd.h"

namespace lrb {
namespace {

using namespace vec8;
using index_t = std::int64_t;
constexpr index_t kHeadDim = kFusedSoftmaxHeadDim;
// Query rows the kernels work on together: 2 made forward + backward 19.5 -> 17.5 ms at the
// quickstart's shape (lrb_bench attention/softmax_fused); 4 spilled registers (18.7 ms).
constexpr int kRowsInFlight = 2;

// One head's [N, d] matrix, read through its strides.
struct HeadMatrix {
  const float* data;
  index_t row_stride, col_stride;
  LRB_INLINE float at(index_t i, index_t c) const { return data[i * row_stride + c * col_stride]; }
};

HeadMatrix head_of(const at::Tensor& x, index_t b, index_t h) {
  return {x.data_ptr<float>() + b * x.stride(0) + h * x.stride(1), x.stride(2), x.stride(3)};
}

// A head's k or v copied into the scratch, as rows [N, d] or transposed [d, N].
LRB_INLINE void copy_rows(const HeadMatrix& m, index_t n, float* __restrict dst) {
  for (index_t j = 0; j < n; ++j)
    for (index_t c = 0; c < kHeadDim; ++c) dst[j * kHeadDim + c] = m.at(j, c);
}
LRB_INLINE void copy_transposed(const HeadMatrix& m, index_t n, float* __restrict dst) {
  for (index_t j = 0; j < n; ++j)
    for (index_t c = 0; c < kHeadDim; ++c) dst[c * n + j] = m.at(j, c);
}

// What a head's forward reads and writes. The scratch holds k transposed [d, Nk], v [Nk, d],
// a row of scores [Nk] and the scaled query [d]. probs is null when nothing will be
// differentiated (each row stays in the scratch then).
struct ForwardHead {
  HeadMatrix q, k, v;
  const float* key_offset;  // [Nk]: the key's bias, or -inf where the key is dropped
  float scale;
  index_t nq, nk;
  float* scratch;  // scratch_floats(nk)
  float* probs;    // [Nq, Nk] or null
  float* out;      // [Nq, d], contiguous
  static index_t scratch_floats(index_t nk) { return 2 * nk * kHeadDim + kRowsInFlight * (nk + kHeadDim); }
};

// Softmax of a row of scores in place: its max, exp(s - max), and 1/sum, keys across lanes.
LRB_INLINE void softmax_row(float* __restrict s, index_t nk) {
  const float total = exp_row(s, row_max(s, nk), nk);
  const float inv = 1.0f / total;
  // Written out in vectors: GCC left this loop scalar.
  const index_t full = nk / 8 * 8;
  index_t j = 0;
  for (; j < full; j += 8) store8(s + j, load8(s + j) * inv);
  for (; j < nk; ++j) s[j] *= inv;
}

// Query rows [i0, i0 + R) of a head, d = 8 (a row of the head is one vector). R rows at a
// time share each load of k and v and keep 4R accumulators in flight, so the FMAs do not
// wait on one another.
template <int R>
LRB_INLINE void forward_rows(const ForwardHead& a, index_t i0, const float* __restrict kt, const float* __restrict vr,
                             float* __restrict rows, float* __restrict qs) {
  constexpr index_t d = kHeadDim;
  const index_t nk = a.nk, full = nk / 8 * 8;
  float* s[R];
  for (int r = 0; r < R; ++r) {
    s[r] = a.probs ? a.probs + (i0 + r) * nk : rows + r * nk;
    for (index_t c = 0; c < d; ++c) qs[r * d + c] = a.q.at(i0 + r, c) * a.scale;
  }
  // Scores: 8 keys at a time, the head's columns unrolled.
  index_t j = 0;
  for (; j < full; j += 8) {
    const V8 offset = load8(a.key_offset + j);
    V8 acc[R];
    for (int r = 0; r < R; ++r) acc[r] = offset;
    for (index_t c = 0; c < d; ++c) {
      const V8 kc = load8(kt + c * nk + j);
      for (int r = 0; r < R; ++r) acc[r] += qs[r * d + c] * kc;
    }
    for (int r = 0; r < R; ++r) store8(s[r] + j, acc[r]);
  }
  for (; j < nk; ++j)
    for (int r = 0; r < R; ++r) {
      float sj = a.key_offset[j];
      for (index_t c = 0; c < d; ++c) sj += qs[r * d + c] * kt[c * nk + j];
      s[r][j] = sj;
    }
  for (int r = 0; r < R; ++r) softmax_row(s[r], nk);
  // out = sum_j p_j v_j, four keys' accumulators per row.
  V8 acc[R][4] = {};
  for (j = 0; j + 4 <= nk; j += 4)
    for (int t = 0; t < 4; ++t) {
      const V8 vj = load8(vr + (j + t) * d);
      for (int r = 0; r < R; ++r) acc[r][t] += s[r][j + t] * vj;
    }
  for (; j < nk; ++j)
    for (int r = 0; r < R; ++r) acc[r][0] += s[r][j] * load8(vr + j * d);
  for (int r = 0; r < R; ++r) store8(a.out + (i0 + r) * d, (acc[r][0] + acc[r][1]) + (acc[r][2] + acc[r][3]));
}

LRB_INLINE void forward_head(const ForwardHead& a) {
  constexpr index_t d = kHeadDim;
  const index_t nk = a.nk;
  float* __restrict kt = a.scratch;
  float* __restrict vr = kt + d * nk;
  float* __restrict rows = vr + nk * d;
  float* __restrict qs = rows + kRowsInFlight * nk;
  copy_transposed(a.k, nk, kt);
  copy_rows(a.v, nk, vr);
  index_t i = 0;
  for (; i + kRowsInFlight <= a.nq; i += kRowsInFlight) forward_rows<kRowsInFlight>(a, i, kt, vr, rows, qs);
  for (; i < a.nq; ++i) forward_rows<1>(a, i, kt, vr, rows, qs);
}

// What a head's backward reads and writes. The scratch holds k [Nk, d], v transposed
// [d, Nk], a row [Nk] and two of [d]; dk and dv are zeroed by the caller and accumulated here.
struct BackwardHead {
  HeadMatrix q, k, v, grad_out;
  const float* probs;  // [Nq, Nk]
  float scale;
  index_t nq, nk;
  float* scratch;       // scratch_floats(nk)
  float *dq, *dk, *dv;  // contiguous [Nq, d], [Nk, d], [Nk, d]
  static index_t scratch_floats(index_t nk) { return 2 * nk * kHeadDim + kRowsInFlight * (nk + 2 * kHeadDim); }
};

// The backward of query rows [i0, i0 + R), as forward_rows shares loads among them.
template <int R>
LRB_INLINE void backward_rows(const BackwardHead& a, index_t i0, const float* __restrict kr,
                              const float* __restrict vt, float* __restrict ds, float* __restrict g,
                              float* __restrict qs) {
  constexpr index_t d = kHeadDim;
  const index_t nk = a.nk, full = nk / 8 * 8;
  const float* p[R];
  float* dsr[R];
  for (int r = 0; r < R; ++r) {
    p[r] = a.probs + (i0 + r) * nk;
    dsr[r] = ds + r * nk;
    for (index_t c = 0; c < d; ++c) {
      g[r * d + c] = a.grad_out.at(i0 + r, c);
      qs[r * d + c] = a.q.at(i0 + r, c) * a.scale;
    }
  }
  // dP = dO v^T (8 keys at a time), delta = sum_j P dP, then the softmax's backward
  // dS = P (dP - delta), in place.
  V8 dot[R] = {};
  index_t j = 0;
  for (; j < full; j += 8) {
    V8 acc[R] = {};
    for (index_t c = 0; c < d; ++c) {
      const V8 vc = load8(vt + c * nk + j);
      for (int r = 0; r < R; ++r) acc[r] += g[r * d + c] * vc;
    }
    for (int r = 0; r < R; ++r) {
      store8(dsr[r] + j, acc[r]);
      dot[r] += acc[r] * load8(p[r] + j);
    }
  }
  float delta[R];
  for (int r = 0; r < R; ++r) delta[r] = lane_sum(dot[r]);
  for (; j < nk; ++j)
    for (int r = 0; r < R; ++r) {
      float dpj = 0;
      for (index_t c = 0; c < d; ++c) dpj += g[r * d + c] * vt[c * nk + j];
      dsr[r][j] = dpj;
      delta[r] += dpj * p[r][j];
    }
  for (int r = 0; r < R; ++r)
    for (j = 0; j < nk; ++j) dsr[r][j] = p[r][j] * (dsr[r][j] - delta[r]);
  // dq = scale dS k, dk += dS (scale q), dv += P^T dO: one pass over the keys.
  V8 qv[R], gv[R], dq[R];
  for (int r = 0; r < R; ++r) {
    qv[r] = load8(qs + r * d);
    gv[r] = load8(g + r * d);
  }
  accumulate_key_gradients<R>(dsr, p, kr, qv, gv, nk, a.dk, a.dv, dq);
  for (int r = 0; r < R; ++r) store8(a.dq + (i0 + r) * d, dq[r] * a.scale);
}

LRB_INLINE void backward_head(const BackwardHead& a) {
  constexpr index_t d = kHeadDim;
  const index_t nk = a.nk;
  float* __restrict kr = a.scratch;
  float* __restrict vt = kr + nk * d;
  float* __restrict ds = vt + d * nk;                  // the rows' dS
  float* __restrict g = ds + kRowsInFlight * nk;       // their output gradients
  float* __restrict qs = g + kRowsInFlight * d;        // and scaled queries
  copy_rows(a.k, nk, kr);
  copy_transposed(a.v, nk, vt);
  index_t i = 0;
  for (; i + kRowsInFlight <= a.nq; i += kRowsInFlight) backward_rows<kRowsInFlight>(a, i, kr, vt, ds, g, qs);
  for (; i < a.nq; ++i) backward_rows<1>(a, i, kr, vt, ds, g, qs);
}

LRB_SIMD_DISPATCH(forward_head, ForwardHead)
LRB_SIMD_DISPATCH(backward_head, BackwardHead)

// [B, Nk] float32: the key bias where the key is kept, -inf where it is dropped; all -inf
// rows (no kept key) are the caller's to zero.
at::Tensor key_offsets(const at::Tensor& keep, const at::Tensor& bias, index_t B, index_t Nk) {
  const at::Tensor offset = bias.defined() ? bias.to(at::kFloat) : at::zeros({B, Nk}, at::kFloat);
  // Out of place: the bias may be the caller's own tensor.
  if (keep.defined()) return offset.masked_fill(keep.logical_not(), -std::numeric_limits<float>::infinity()).contiguous();
  return offset.contiguous();
}

at::Tensor forward_all(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& offsets,
                       const std::vector<bool>& dead, double scale, at::Tensor* probs) {
  const index_t B = q.size(0), H = q.size(1), Nq = q.size(2), Nk = k.size(2), d = q.size(3);
  at::Tensor out = at::empty({B, H, Nq, d}, q.options().memory_format(at::MemoryFormat::Contiguous));
  if (probs) *probs = at::empty({B, H, Nq, Nk}, q.options().memory_format(at::MemoryFormat::Contiguous));
  if (out.numel() == 0) return out;
  at::parallel_for(0, B * H, 1, [&](index_t begin, index_t end) {
    // The scratch is a tensor, so that the counting allocator sees it.
    at::Tensor scratch = at::empty({ForwardHead::scratch_floats(Nk)}, q.options());
    for (index_t bh = begin; bh < end; ++bh) {
      const index_t b = bh / H, h = bh % H;
      float* o = out.data_ptr<float>() + bh * Nq * d;
      float* p = probs ? probs->data_ptr<float>() + bh * Nq * Nk : nullptr;
      if (dead[static_cast<std::size_t>(b)] || Nk == 0) {
        std::fill(o, o + Nq * d, 0.0f);
        if (p) std::fill(p, p + Nq * Nk, 0.0f);
        continue;
      }
      forward_head_any({head_of(q, b, h), head_of(k, b, h), head_of(v, b, h), offsets.data_ptr<float>() + b * Nk,
                        static_cast<float>(scale), Nq, Nk, scratch.data_ptr<float>(), p, o});
    }
  });
  return out;
}

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct FusedSoftmaxFunction : public torch::autograd::Function<FusedSoftmaxFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                            const at::Tensor& offsets, double scale, std::vector<bool> dead) {
    at::Tensor probs;
    at::Tensor out = forward_all(q, k, v, offsets, dead, scale, &probs);
    ctx->save_for_backward({q, k, v, probs});
    ctx->saved_data["scale"] = scale;
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &q = saved[0], &k = saved[1], &v = saved[2], &probs = saved[3];
    const double scale = ctx->saved_data["scale"].toDouble();
    const index_t B = q.size(0), H = q.size(1), Nq = q.size(2), Nk = k.size(2), d = q.size(3);
    const at::Tensor grad = grads[0].to(at::kFloat);
    at::Tensor dq = at::empty({B, H, Nq, d}, q.options().memory_format(at::MemoryFormat::Contiguous));
    at::Tensor dk = at::zeros({B, H, Nk, d}, q.options());
    at::Tensor dv = at::zeros({B, H, Nk, d}, q.options());
    if (dq.numel() > 0 && Nk > 0) {
      at::parallel_for(0, B * H, 1, [&](index_t begin, index_t end) {
        at::Tensor scratch = at::empty({BackwardHead::scratch_floats(Nk)}, q.options());
        for (index_t bh = begin; bh < end; ++bh) {
          const index_t b = bh / H, h = bh % H;
          backward_head_any({head_of(q, b, h), head_of(k, b, h), head_of(v, b, h), head_of(grad, b, h),
                             probs.data_ptr<float>() + bh * Nq * Nk, static_cast<float>(scale), Nq, Nk,
                             scratch.data_ptr<float>(), dq.data_ptr<float>() + bh * Nq * d,
                             dk.data_ptr<float>() + bh * Nk * d, dv.data_ptr<float>() + bh * Nk * d});
        }
      });
    } else {
      dq.zero_();
    }
    return {dq, dk, dv, at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

bool fused_softmax_applies(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  for (const at::Tensor* x : {&q, &k, &v})
    if (!x->defined() || !x->device().is_cpu() || x->layout() != at::kStrided || x->scalar_type() != at::kFloat ||
        x->dim() != 4 || x->is_neg() || x->is_conj())
      return false;
  // Under CPU autocast the products run in the autocast type: LibTorch's path does that.
  if (cpu_autocast_active()) return false;
  const index_t d = q.size(3);
  return d == kFusedSoftmaxHeadDim && k.size(3) == d && v.size(3) == d;
}

at::Tensor fused_softmax_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                   const at::Tensor& keep, double scale, const at::Tensor& key_bias) {
  LRB_CHECK(fused_softmax_applies(q, k, v), "fused_softmax_attention: operands outside its fast path");
  // Named in LibTorch's profiler (a custom function's forward is not an op of its own).
  RECORD_FUNCTION("lrb::fused_softmax_attention", std::vector<c10::IValue>({q, k, v}));
  const index_t B = q.size(0), Nk = k.size(2);
  const at::Tensor offsets = key_offsets(keep, key_bias, B, Nk);
  std::vector<bool> dead(static_cast<std::size_t>(B), false);
  if (keep.defined()) {
    const at::Tensor none = keep.logical_not().all(1).contiguous();
    const bool* flag = none.data_ptr<bool>();
    for (index_t b = 0; b < B; ++b) dead[static_cast<std::size_t>(b)] = flag[b];
  }
  if (at::GradMode::is_enabled() && (q.requires_grad() || k.requires_grad() || v.requires_grad()))
    return FusedSoftmaxFunction::apply(q, k, v, offsets, scale, dead);
  return forward_all(q, k, v, offsets, dead, scale, nullptr);
}

}  // namespace lrb
