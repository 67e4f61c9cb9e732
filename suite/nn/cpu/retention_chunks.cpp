#include "suite/nn/cpu/retention_chunks.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/record_function.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <atomic>
#include <vector>

#include "suite/core/errors.h"
#include "suite/nn/batched_matmul.h"
#include "suite/nn/cpu/simd.h"

namespace lrb {
namespace {

using index_t = std::int64_t;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

std::atomic<bool> force_general{false};

// One step of the chunk scan over a state of n elements: o = prev * gamma + add forward,
// add + gamma * prev in reverse (the same products and sums, so the same bits however the
// loop is compiled). In vectors, compiled twice (AVX2 and the baseline), at -O3
// (suite/nn/cpu/simd.h): at -O2 it stayed one float at a time, 6 % of the chunkwise form's
// time at N = 8192.
template <typename T>
LRB_INLINE void scan_step_of(T* __restrict o, const T* __restrict prev, const T* __restrict add, T gamma,
                             index_t n, bool reverse) {
  if (reverse)
    for (index_t i = 0; i < n; ++i) o[i] = add[i] + gamma * prev[i];
  else
    for (index_t i = 0; i < n; ++i) o[i] = prev[i] * gamma + add[i];
}
LRB_SIMD_EXACT_DISPATCH(scan_step, scan_step_of)

// One head's scan: os[c] from xs [nc, block] (state_scan's recurrence, below).
template <typename T>
void scan_head(T* os, const T* xs, T gamma, index_t nc, index_t block, bool reverse) {
  if (nc == 0) return;
  const index_t first = reverse ? nc - 1 : 0;
  std::fill(os + first * block, os + (first + 1) * block, T(0));
  for (index_t step = 1; step < nc; ++step) {
    const index_t c = reverse ? nc - 1 - step : step, from = reverse ? c + 1 : c - 1;
    // Both directions read the neighbour they come from, in the state and in x.
    scan_step(os + c * block, os + from * block, xs + from * block, gamma, block, reverse);
  }
}

// y = s . x row by row (y += s . x with `add`): x and y [rows, cols] with row strides, s [rows].
template <typename T>
LRB_INLINE void scale_rows_of(const T* __restrict x, index_t ldx, const T* __restrict s, index_t rows, index_t cols,
                              T* __restrict y, index_t ldy, bool add) {
  for (index_t r = 0; r < rows; ++r) {
    const T f = s[r];
    const T* xr = x + r * ldx;
    T* yr = y + r * ldy;
    if (add)
      for (index_t j = 0; j < cols; ++j) yr[j] += f * xr[j];
    else
      for (index_t j = 0; j < cols; ++j) yr[j] = f * xr[j];
  }
}
LRB_SIMD_EXACT_DISPATCH(scale_rows, scale_rows_of)

// x *= m elementwise over n values (a chunk's scores, or their gradient, times the decay).
template <typename T>
LRB_INLINE void multiply_in_place_of(T* __restrict x, const T* __restrict m, index_t n) {
  for (index_t i = 0; i < n; ++i) x[i] *= m[i];
}
LRB_SIMD_EXACT_DISPATCH(multiply_in_place, multiply_in_place_of)

// out[c + 1] = out[c] * decay + x[c] over the chunks of x [B, H, nc, d, dv], out[0] = 0; with
// `reverse` its adjoint, out[c] = x[c + 1] + decay * out[c + 1] from the last chunk down,
// out[nc - 1] = 0. decay [H]. CPU float32/float64 in a loop of its own, elsewhere (a GPU,
// reduced precision) the same steps as ATen ops, outside autograd.
at::Tensor state_scan(const at::Tensor& x_in, const at::Tensor& decay, bool reverse) {
  const at::Tensor x = x_in.contiguous();
  const std::int64_t B = x.size(0), H = x.size(1), nc = x.size(2), block = x.size(3) * x.size(4);
  at::Tensor out = at::empty_like(x, at::MemoryFormat::Contiguous);
  if (out.numel() == 0) return out;
  if (x.device().is_cpu() && (x.scalar_type() == at::kFloat || x.scalar_type() == at::kDouble)) {
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "retention_chunk_scan", [&] {
      const at::Tensor g = decay.to(at::kCPU, x.scalar_type()).contiguous();
      for (std::int64_t bh = 0; bh < B * H; ++bh)
        scan_head(out.data_ptr<scalar_t>() + bh * nc * block, x.data_ptr<scalar_t>() + bh * nc * block,
                  g.data_ptr<scalar_t>()[bh % H], nc, block, reverse);
    });
    return out;
  }
  // Elsewhere (a GPU, reduced precision) the same steps as ATen ops, outside autograd.
  at::NoGradGuard no_grad;
  const at::Tensor g = decay.to(x.device(), x.scalar_type()).view({1, H, 1, 1});
  const std::int64_t first = reverse ? nc - 1 : 0;
  out.select(2, first).zero_();
  for (std::int64_t step = 1; step < nc; ++step) {
    const std::int64_t c = reverse ? nc - 1 - step : step, from = reverse ? c + 1 : c - 1;
    at::Tensor o = out.select(2, c);
    at::mul_out(o, out.select(2, from), g);
    o.add_(x.select(2, from));
  }
  return out;
}

// The state entering each chunk from each chunk's contribution kv [B, H, nc, d, dv]:
// states[0] = 0, states[c + 1] = states[c] * decay + kv[c] (decay [H], gamma^C, a constant). As
// one function with one node: written as nc steps of autograd ops it made 2 nc ops and nodes
// forward and as many backward (256 each at N = 8192, C = 64), most of their time dispatch.
// The same operations in the same order, so the same bits.
struct ChunkStateScan : public torch::autograd::Function<ChunkStateScan> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& kv, const at::Tensor& decay) {
    ctx->save_for_backward({decay});
    return state_scan(kv, decay, false);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    return {state_scan(grads[0], ctx->get_saved_variables()[0], true), at::Tensor()};
  }
};

// The form composed of LibTorch's ops (retention_chunks's general path).
at::Tensor composed(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& inner,
                    const at::Tensor& key, const at::Tensor& query, const at::Tensor& chunk) {
  const std::int64_t H = q.size(1), C = q.size(3);
  const at::Tensor scores = batched_matmul(q, k.transpose(-2, -1)) * inner.view({1, H, 1, C, C});
  const at::Tensor kv = batched_matmul((k * key.view({1, H, 1, C, 1})).transpose(-2, -1), v);  // [B, H, nc, d, dv]
  const at::Tensor states = ChunkStateScan::apply(kv, chunk);  // the state entering each chunk
  return batched_matmul(scores, v) + batched_matmul(q * query.view({1, H, 1, C, 1}), states);
}

// The sizes of a call, and one head's pointers into its contiguous operands.
struct Geometry {
  index_t H, nc, C, d, dv;
};

template <typename T>
struct HeadDecays {
  const T* inner;  // [C, C]
  const T* key;    // [C]
  const T* query;  // [C]
  T chunk;
};

template <typename T>
HeadDecays<T> head_decays(const at::Tensor& inner, const at::Tensor& key, const at::Tensor& query,
                          const at::Tensor& chunk, const Geometry& g, index_t h) {
  return {inner.data_ptr<T>() + h * g.C * g.C, key.data_ptr<T>() + h * g.C, query.data_ptr<T>() + h * g.C,
          chunk.data_ptr<T>()[h]};
}

template <typename T>
const T* at_head(const at::Tensor& x, index_t bh) {
  return x.data_ptr<T>() + bh * (x.numel() / std::max<index_t>(1, x.size(0) * x.size(1)));
}
template <typename T>
T* at_head_mut(at::Tensor& x, index_t bh) {
  return x.data_ptr<T>() + bh * (x.numel() / std::max<index_t>(1, x.size(0) * x.size(1)));
}

// Forward of one head: every chunk's contribution kv_c = (key . k_c)^T v_c, the scan to the
// state entering each chunk, then each chunk's scores a_c = (q_c k_c^T) . inner (kept for the
// backward) and out_c = a_c v_c + (query . q_c) S_c.
template <typename T>
void forward_head(const Geometry& g, const HeadDecays<T>& dec, const T* q, const T* k, const T* v, T* a, T* states,
                  T* out, T* kv, T* scaled) {
  const index_t C = g.C, d = g.d, dv = g.dv;
  // The last chunk's contribution reaches no later chunk, and the first chunk's state is 0: the
  // products with them are skipped (forward and backward), which matters where chunks are few.
  for (index_t c = 0; c + 1 < g.nc; ++c) {
    scale_rows(k + c * C * d, d, dec.key, C, d, scaled, d, false);
    gemm_rows<T>(true, false, d, dv, C, 1, scaled, d, v + c * C * dv, dv, 0, kv + c * d * dv, dv);
  }
  scan_head(states, kv, dec.chunk, g.nc, d * dv, false);
  for (index_t c = 0; c < g.nc; ++c) {
    const T* qc = q + c * C * d;
    T* ac = a + c * C * C;
    T* oc = out + c * C * dv;
    gemm_rows<T>(false, true, C, C, d, 1, qc, d, k + c * C * d, d, 0, ac, C);
    multiply_in_place(ac, dec.inner, C * C);
    gemm_rows<T>(false, false, C, dv, C, 1, ac, C, v + c * C * dv, dv, 0, oc, dv);
    if (c == 0) continue;
    scale_rows(qc, d, dec.query, C, d, scaled, d, false);
    gemm_rows<T>(false, false, C, dv, d, 1, scaled, d, states + c * d * dv, dv, 1, oc, dv);
  }
}

// Backward of one head, given dout: through each chunk's output (dq, dk, dv from the scores
// and the state's gradient dS_c = (query . q_c)^T dout_c), the reverse scan to each chunk's
// contribution's gradient, then through the contributions (dk, dv added).
template <typename T>
void backward_head(const Geometry& g, const HeadDecays<T>& dec, const T* q, const T* k, const T* v, const T* a,
                   const T* states, const T* dout, T* dq, T* dk, T* dvv, T* dstates, T* dkv, T* ds, T* scaled,
                   T* partial) {
  const index_t C = g.C, d = g.d, dv = g.dv;
  for (index_t c = 0; c < g.nc; ++c) {
    const T *qc = q + c * C * d, *kc = k + c * C * d, *vc = v + c * C * dv, *go = dout + c * C * dv;
    T *dqc = dq + c * C * d, *dkc = dk + c * C * d;
    gemm_rows<T>(false, true, C, C, dv, 1, go, dv, vc, dv, 0, ds, C);                      // d a_c
    gemm_rows<T>(true, false, C, dv, C, 1, a + c * C * C, C, go, dv, 0, dvv + c * C * dv, dv);  // a_c^T dout
    multiply_in_place(ds, dec.inner, C * C);                                                // d scores
    gemm_rows<T>(false, false, C, d, C, 1, ds, C, kc, d, 0, dqc, d);
    gemm_rows<T>(true, false, C, d, C, 1, ds, C, qc, d, 0, dkc, d);
    if (c == 0) continue;  // S_0 = 0: nothing reaches q_0 through it, and S_0 has no inputs
    gemm_rows<T>(false, true, C, d, dv, 1, go, dv, states + c * d * dv, dv, 0, partial, d);
    scale_rows(partial, d, dec.query, C, d, dqc, d, true);
    scale_rows(qc, d, dec.query, C, d, scaled, d, false);
    gemm_rows<T>(true, false, d, dv, C, 1, scaled, d, go, dv, 0, dstates + c * d * dv, dv);
  }
  scan_head(dkv, dstates, dec.chunk, g.nc, d * dv, true);
  for (index_t c = 0; c + 1 < g.nc; ++c) {
    const T *kc = k + c * C * d, *vc = v + c * C * dv, *gkv = dkv + c * d * dv;
    scale_rows(kc, d, dec.key, C, d, scaled, d, false);
    gemm_rows<T>(false, false, C, dv, d, 1, scaled, d, gkv, dv, 1, dvv + c * C * dv, dv);
    gemm_rows<T>(false, true, C, d, dv, 1, vc, dv, gkv, dv, 0, partial, d);
    scale_rows(partial, d, dec.key, C, d, dk + c * C * d, d, true);
  }
}

Geometry geometry_of(const at::Tensor& q, const at::Tensor& v) {
  return {q.size(1), q.size(2), q.size(3), q.size(4), v.size(4)};
}

struct RetentionChunksFunction : public torch::autograd::Function<RetentionChunksFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& q_in, const at::Tensor& k_in,
                            const at::Tensor& v_in, const at::Tensor& inner, const at::Tensor& key,
                            const at::Tensor& query, const at::Tensor& chunk) {
    const at::Tensor q = q_in.contiguous(), k = k_in.contiguous(), v = v_in.contiguous();
    const Geometry g = geometry_of(q, v);
    const index_t BH = q.size(0) * g.H;
    // The chunks' scores after the decay (the backward's a_c) and the state entering each chunk.
    at::Tensor a = at::empty({q.size(0), g.H, g.nc, g.C, g.C}, q.options());
    at::Tensor states = at::empty({q.size(0), g.H, g.nc, g.d, g.dv}, q.options());
    at::Tensor out = at::empty({q.size(0), g.H, g.nc, g.C, g.dv}, q.options());
    AT_DISPATCH_FLOATING_TYPES(q.scalar_type(), "retention_chunks_forward", [&] {
      at::parallel_for(0, BH, 1, [&](index_t begin, index_t end) {
        // Scratch as tensors, so that the counting allocator sees it.
        at::Tensor kv = at::empty({g.nc * g.d * g.dv}, q.options());
        at::Tensor scaled = at::empty({g.C * g.d}, q.options());
        for (index_t bh = begin; bh < end; ++bh)
          forward_head<scalar_t>(g, head_decays<scalar_t>(inner, key, query, chunk, g, bh % g.H),
                                 at_head<scalar_t>(q, bh), at_head<scalar_t>(k, bh), at_head<scalar_t>(v, bh),
                                 at_head_mut<scalar_t>(a, bh), at_head_mut<scalar_t>(states, bh),
                                 at_head_mut<scalar_t>(out, bh), kv.data_ptr<scalar_t>(), scaled.data_ptr<scalar_t>());
      });
    });
    // The inputs themselves (a contiguous copy is made again in the backward where they were
    // strided), so that a backward with create_graph can differentiate through them.
    ctx->save_for_backward({q_in, k_in, v_in, a, states, inner, key, query, chunk});
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &a = saved[3], &states = saved[4];
    const at::Tensor &inner = saved[5], &key = saved[6], &query = saved[7], &chunk = saved[8];
    if (at::GradMode::is_enabled()) return recorded_backward(saved, grads[0]);
    const at::Tensor q = saved[0].contiguous(), k = saved[1].contiguous(), v = saved[2].contiguous();
    const at::Tensor dout = grads[0].to(q.scalar_type()).contiguous();
    const Geometry g = geometry_of(q, v);
    const index_t BH = q.size(0) * g.H;
    at::Tensor dq = at::empty_like(q), dk = at::empty_like(k), dv = at::empty_like(v);
    AT_DISPATCH_FLOATING_TYPES(q.scalar_type(), "retention_chunks_backward", [&] {
      at::parallel_for(0, BH, 1, [&](index_t begin, index_t end) {
        at::Tensor dstates = at::empty({2, g.nc * g.d * g.dv}, q.options());  // and the contributions'
        at::Tensor ds = at::empty({g.C * g.C}, q.options());
        at::Tensor rows = at::empty({2, g.C * g.d}, q.options());
        for (index_t bh = begin; bh < end; ++bh)
          backward_head<scalar_t>(g, head_decays<scalar_t>(inner, key, query, chunk, g, bh % g.H),
                                  at_head<scalar_t>(q, bh), at_head<scalar_t>(k, bh), at_head<scalar_t>(v, bh),
                                  at_head<scalar_t>(a, bh), at_head<scalar_t>(states, bh),
                                  at_head<scalar_t>(dout, bh), at_head_mut<scalar_t>(dq, bh),
                                  at_head_mut<scalar_t>(dk, bh), at_head_mut<scalar_t>(dv, bh),
                                  dstates[0].data_ptr<scalar_t>(), dstates[1].data_ptr<scalar_t>(),
                                  ds.data_ptr<scalar_t>(), rows[0].data_ptr<scalar_t>(), rows[1].data_ptr<scalar_t>());
      });
    });
    return {dq, dk, dv, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }

  // A backward with create_graph (a second derivative to come): the gradients through the form
  // composed of LibTorch's ops, which record their own graph.
  static variable_list recorded_backward(const variable_list& saved, const at::Tensor& dout) {
    const at::Tensor out = composed(saved[0], saved[1], saved[2], saved[5], saved[6], saved[7], saved[8]);
    std::vector<at::Tensor> inputs;
    for (int i = 0; i < 3; ++i)
      if (saved[i].requires_grad()) inputs.push_back(saved[i]);
    const variable_list got =
        torch::autograd::grad({out}, inputs, {dout}, /*retain_graph=*/true, /*create_graph=*/true);
    variable_list result(7);
    for (int i = 0, j = 0; i < 3; ++i)
      if (saved[i].requires_grad()) result[static_cast<std::size_t>(i)] = got[static_cast<std::size_t>(j++)];
    return result;
  }
};

}  // namespace

bool retention_chunks_fused_applies(const at::Tensor& q) {
  if (force_general.load(std::memory_order_relaxed) || cpu_autocast_active() || !batched_matmul_has_blas())
    return false;
  return q.defined() && q.device().is_cpu() && q.layout() == at::kStrided &&
         (q.scalar_type() == at::kFloat || q.scalar_type() == at::kDouble) && !q.is_neg() && !q.is_conj();
}

at::Tensor retention_chunks(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& inner,
                            const at::Tensor& key, const at::Tensor& query, const at::Tensor& chunk) {
  LRB_CHECK(q.dim() == 5 && k.sizes() == q.sizes() && v.dim() == 5 && v.sizes().slice(0, 4).equals(q.sizes().slice(0, 4)),
            "retention_chunks: q, k, v must be [B, H, nc, C, d] alike");
  const std::int64_t H = q.size(1), C = q.size(3);
  LRB_CHECK(inner.sizes().equals({H, C, C}) && key.sizes().equals({H, C}) && query.sizes().equals({H, C}) &&
                chunk.sizes().equals({H}),
            "retention_chunks: decays of the wrong shape");
  const bool fused = retention_chunks_fused_applies(q) && retention_chunks_fused_applies(k) &&
                     retention_chunks_fused_applies(v) && k.scalar_type() == q.scalar_type() &&
                     v.scalar_type() == q.scalar_type() && q.numel() > 0 && v.numel() > 0;
  if (!fused) return composed(q, k, v, inner, key, query, chunk);
  RECORD_FUNCTION("lrb::retention_chunks", std::vector<c10::IValue>({q, k, v}));  // for the profiler
  const auto decay = [&](const at::Tensor& t) { return t.detach().to(at::kCPU, q.scalar_type()).contiguous(); };
  return RetentionChunksFunction::apply(q, k, v, decay(inner), decay(key), decay(query), decay(chunk));
}

bool retention_chunks_use_general_path(bool general) { return force_general.exchange(general); }

}  // namespace lrb
