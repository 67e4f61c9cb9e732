#include "suite/nn/cpu/blocked_small_head.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "suite/core/errors.h"
#include "suite/nn/attention/common.h"
#include "suite/nn/batched_matmul.h"
#include "suite/nn/cpu/simd.h"

namespace lrb {
namespace {

using namespace vec8;
using index_t = std::int64_t;
constexpr index_t d = 8;
constexpr float kInf = std::numeric_limits<float>::infinity();

// Rows [*, 8] of a 5-d tensor at (b, h, j), read or written through its strides.
template <typename T>
struct Rows {
  T* data;
  index_t row, col;
  LRB_INLINE T& at(index_t i, index_t c) const { return data[i * row + c * col]; }
};

template <typename T>
Rows<T> rows_of(const at::Tensor& x, index_t b, index_t h, index_t j) {
  return {x.data_ptr<float>() + b * x.stride(0) + h * x.stride(1) + j * x.stride(2), x.stride(3), x.stride(4)};
}

// A block's offsets: row r (its query) at data + r * row, the keys contiguous.
struct OffsetRows {
  const float* data;
  index_t row;
};

struct ForwardBlock {
  Rows<const float> q, k, v;
  OffsetRows offset;
  index_t bq, slots;
  float* scratch;  // scratch_floats(slots)
  Rows<float> out, lse;
  static index_t scratch_floats(index_t slots) { return 2 * slots * d + slots; }
};

// k transposed [8, slots] and v as rows [slots, 8] into the scratch.
LRB_INLINE void copy_keys(const Rows<const float>& k, const Rows<const float>& v, index_t nk, float* __restrict kt,
                          float* __restrict vr, bool v_transposed) {
  for (index_t j = 0; j < nk; ++j)
    for (index_t c = 0; c < d; ++c) {
      kt[c * nk + j] = k.at(j, c);
      if (v_transposed)
        vr[c * nk + j] = v.at(j, c);
      else
        vr[j * d + c] = v.at(j, c);
    }
}

// s[j] = offset[j] + q . k_j over the block's keys (kt: k transposed), 8 keys at a time.
LRB_INLINE void scores_row(const float* __restrict q, const float* __restrict kt, const float* __restrict offset,
                           index_t nk, float* __restrict s) {
  const index_t full = nk / 8 * 8;
  index_t j = 0;
  for (; j < full; j += 8) {
    V8 acc = load8(offset + j);
    for (index_t c = 0; c < d; ++c) acc += q[c] * load8(kt + c * nk + j);
    store8(s + j, acc);
  }
  for (; j < nk; ++j) {
    float sj = offset[j];
    for (index_t c = 0; c < d; ++c) sj += q[c] * kt[c * nk + j];
    s[j] = sj;
  }
}

LRB_INLINE void forward_block(const ForwardBlock& a) {
  const index_t nk = a.slots;
  float* __restrict kt = a.scratch;
  float* __restrict vr = kt + d * nk;
  float* __restrict s = vr + nk * d;
  copy_keys(a.k, a.v, nk, kt, vr, /*v_transposed=*/false);
  for (index_t r = 0; r < a.bq; ++r) {
    float q[d];
    for (index_t c = 0; c < d; ++c) q[c] = a.q.at(r, c);
    scores_row(q, kt, a.offset.data + r * a.offset.row, nk, s);
    const float m = row_max(s, nk);
    if (m == -kInf) {  // every score dropped
      for (index_t c = 0; c < d; ++c) a.out.at(r, c) = 0.0f;
      a.lse.at(r, 0) = kInf;
      continue;
    }
    const float total = exp_row(s, m, nk);
    index_t j = 0;
    // out = sum_j e_j v_j / total, four keys' accumulators in flight.
    V8 acc[4] = {};
    for (j = 0; j + 4 <= nk; j += 4)
      for (int t = 0; t < 4; ++t) acc[t] += s[j + t] * load8(vr + (j + t) * d);
    for (; j < nk; ++j) acc[0] += s[j] * load8(vr + j * d);
    const V8 o = ((acc[0] + acc[1]) + (acc[2] + acc[3])) * (1.0f / total);
    for (index_t c = 0; c < d; ++c) a.out.at(r, c) = o[c];
    a.lse.at(r, 0) = m + std::log(total);
  }
}

struct BackwardBlock {
  Rows<const float> q, k, v, dout, lse, delta;
  OffsetRows offset;
  index_t bq, slots;
  float scale;
  float* scratch;  // scratch_floats(slots)
  Rows<float> dq;
  float *dk, *dv;  // [slots, 8] contiguous; written here
  static index_t scratch_floats(index_t slots) { return 3 * slots * d + 2 * slots; }
};

LRB_INLINE void backward_block(const BackwardBlock& a) {
  const index_t nk = a.slots, full = nk / 8 * 8;
  float* __restrict kt = a.scratch;
  float* __restrict vt = kt + d * nk;
  float* __restrict kr = vt + d * nk;
  float* __restrict p = kr + nk * d;
  float* __restrict ds = p + nk;
  copy_keys(a.k, a.v, nk, kt, vt, /*v_transposed=*/true);
  for (index_t j = 0; j < nk; ++j)
    for (index_t c = 0; c < d; ++c) kr[j * d + c] = a.k.at(j, c);
  // Zeroed here, where the block's dk and dv are about to be in cache anyway.
  std::fill(a.dk, a.dk + nk * d, 0.0f);
  std::fill(a.dv, a.dv + nk * d, 0.0f);
  for (index_t r = 0; r < a.bq; ++r) {
    const float lse = a.lse.at(r, 0);
    if (lse == kInf) {  // every score dropped: no gradient through this row
      for (index_t c = 0; c < d; ++c) a.dq.at(r, c) = 0.0f;
      continue;
    }
    float q[d], g[d];
    for (index_t c = 0; c < d; ++c) {
      q[c] = a.q.at(r, c);
      g[c] = a.dout.at(r, c);
    }
    const float delta = a.delta.at(r, 0);
    // P = exp(S - lse) from the recomputed scores; dS = P (dO v^T - delta).
    scores_row(q, kt, a.offset.data + r * a.offset.row, nk, p);
    index_t j = 0;
    for (; j < full; j += 8) {
      const V8 pj = exp_nonpositive(load8(p + j) - lse);
      V8 dp = {};
      for (index_t c = 0; c < d; ++c) dp += g[c] * load8(vt + c * nk + j);
      store8(p + j, pj);
      store8(ds + j, pj * (dp - delta));
    }
    for (; j < nk; ++j) {
      const float pj = exp_nonpositive(p[j] - lse);
      float dp = 0;
      for (index_t c = 0; c < d; ++c) dp += g[c] * vt[c * nk + j];
      p[j] = pj;
      ds[j] = pj * (dp - delta);
    }
    // dq = scale dS k, dk += dS q (q already scaled), dv += P^T dO: one pass over the keys.
    float* const ds_rows[1] = {ds};
    const float* const p_rows[1] = {p};
    const V8 qv[1] = {load8(q)}, gv[1] = {load8(g)};
    V8 dq[1];
    accumulate_key_gradients<1>(ds_rows, p_rows, kr, qv, gv, nk, a.dk, a.dv, dq);
    dq[0] *= a.scale;
    for (index_t c = 0; c < d; ++c) a.dq.at(r, c) = dq[0][c];
  }
}

LRB_SIMD_DISPATCH(forward_block, ForwardBlock)
LRB_SIMD_DISPATCH(backward_block, BackwardBlock)

// The offsets expanded to [B, H, n, bq, slots], keys contiguous (a broadcast key axis is
// materialised; the others stay stride 0).
at::Tensor expanded_offsets(const at::Tensor& offsets, at::IntArrayRef shape) {
  at::Tensor o = with_contiguous_keys(offsets, shape[4], at::kFloat);
  while (o.dim() < 5) o = o.unsqueeze(0);
  return o.expand(shape);
}

OffsetRows offset_rows(const at::Tensor& o, index_t b, index_t h, index_t j) {
  return {o.data_ptr<float>() + b * o.stride(0) + h * o.stride(1) + j * o.stride(2), o.stride(3)};
}

}  // namespace

bool blocked_small_head_applies(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  for (const at::Tensor* x : {&q, &k, &v})
    if (!x->defined() || !x->device().is_cpu() || x->layout() != at::kStrided || x->scalar_type() != at::kFloat ||
        x->dim() < 1 || x->size(-1) != d || x->is_neg() || x->is_conj())
      return false;
  return !cpu_autocast_active();
}

void blocked_small_head_forward(const at::Tensor& qs, const at::Tensor& kg, const at::Tensor& vg,
                                const at::Tensor& offsets, at::Tensor& out, at::Tensor& lse) {
  const index_t B = qs.size(0), H = qs.size(1), n = qs.size(2), bq = qs.size(3), slots = kg.size(3);
  LRB_CHECK(qs.dim() == 5 && kg.dim() == 5 && vg.dim() == 5 && kg.size(2) == n && vg.size(3) == slots,
            "blocked_small_head_forward: group shapes disagree");
  const at::Tensor off = expanded_offsets(offsets, {B, H, n, bq, slots});
  at::parallel_for(0, B * H * n, 1, [&](index_t begin, index_t end) {
    // The scratch is a tensor, so that the counting allocator sees it.
    at::Tensor scratch = at::empty({ForwardBlock::scratch_floats(slots)}, qs.options());
    for (index_t t = begin; t < end; ++t) {
      const index_t b = t / (H * n), h = t / n % H, j = t % n;
      forward_block_any({rows_of<const float>(qs, b, h, j), rows_of<const float>(kg, b, h, j),
                         rows_of<const float>(vg, b, h, j), offset_rows(off, b, h, j), bq, slots,
                         scratch.data_ptr<float>(), rows_of<float>(out, b, h, j), rows_of<float>(lse, b, h, j)});
    }
  });
}

void blocked_small_head_backward(const at::Tensor& qs, const at::Tensor& kg, const at::Tensor& vg,
                                 const at::Tensor& offsets, const at::Tensor& lse, const at::Tensor& delta,
                                 const at::Tensor& dout, double scale, at::Tensor& dq, at::Tensor& dkg,
                                 at::Tensor& dvg) {
  const index_t B = qs.size(0), H = qs.size(1), n = qs.size(2), bq = qs.size(3), slots = kg.size(3);
  const at::Tensor off = expanded_offsets(offsets, {B, H, n, bq, slots});
  const at::Tensor g = dout.to(at::kFloat);
  dkg = at::empty({B, H, n, slots, d}, qs.options());  // each block zeroes its own
  dvg = at::empty({B, H, n, slots, d}, qs.options());
  at::parallel_for(0, B * H * n, 1, [&](index_t begin, index_t end) {
    at::Tensor scratch = at::empty({BackwardBlock::scratch_floats(slots)}, qs.options());
    for (index_t t = begin; t < end; ++t) {
      const index_t b = t / (H * n), h = t / n % H, j = t % n;
      const index_t block = (b * H + h) * n + j;
      backward_block_any({rows_of<const float>(qs, b, h, j), rows_of<const float>(kg, b, h, j),
                          rows_of<const float>(vg, b, h, j), rows_of<const float>(g, b, h, j),
                          rows_of<const float>(lse, b, h, j), rows_of<const float>(delta, b, h, j),
                          offset_rows(off, b, h, j), bq, slots, static_cast<float>(scale), scratch.data_ptr<float>(),
                          rows_of<float>(dq, b, h, j), dkg.data_ptr<float>() + block * slots * d,
                          dvg.data_ptr<float>() + block * slots * d});
    }
  });
}

}  // namespace lrb
