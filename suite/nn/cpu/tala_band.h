#pragma once
// The band of TALA's relative bias (tala.h) on the CPU, fused: each query's w nearest keys,
//   out_n = sum over delta < w, delta <= n, of c[h, delta] (q_n . k_(n-delta)) v_(n-delta),
// one query at a time with its w scores in registers. The general path (tala.cpp) scores
// blocks of 64 queries against the 64 + w - 1 keys that end with them, as batched products:
// 71 scores a query for w = 8 useful ones, their products' backward through unfolded views,
// and a [B, H, N/64, 64, 64 + w - 1] score tensor forward and backward. Here a query costs
// its w scores alone, and nothing of size N x w is kept: the backward recomputes the scores.
#include <ATen/core/Tensor.h>

#include <cstdint>

namespace lrb {

// Whether tala_band_fused takes the band of queries like q: a CPU strided float32 or
// float64 tensor, outside CPU autocast (whose products run in the autocast type), and not
// forced off by tala_band_use_general_path. (k, v and c come from q's computation: tala.cpp.)
bool tala_band_fused_applies(const at::Tensor& q);

// q, k [B, H, N, d], v [B, H, N, dv], c [H, w], all of q's type: the band above,
// [B, H, N, dv] (contiguous). Differentiable in all four once (its backward is not itself
// differentiable).
at::Tensor tala_band_fused(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& c);

// Query-key scores the fused band computes: B * H * (N w - w (w - 1) / 2), w at most N.
std::int64_t tala_band_fused_score_elements(std::int64_t batch, std::int64_t heads, std::int64_t tokens,
                                            std::int64_t window);

// For tests: take the general (blocked) path even where the fused one applies (true), or
// the fused one where it applies (false, the default). Returns the previous setting.
bool tala_band_use_general_path(bool general);

}  // namespace lrb
