#pragma once
// One group of the blocked engine (blocked_attention.h), fused for CPU float32 heads of 8:
// each query row's scores over its block's keys computed, exponentiated and used while in
// L1, forward and backward, instead of LibTorch's product, bias, mask, max, exp, sum,
// divide and product over the group's score tensor (each a pass over memory, each a
// dispatch). The engine's contract is kept: the forward writes the output and one
// log-sum-exp per query, the backward recomputes the scores from them, so no score tensor
// is ever held (peak memory O(N d) plus the group's gathered keys).
//
// Why: at heads of 8 (the quickstart's Longformer and BigBird: 4 heads of 8, blocks of 14
// and 16) the group's products are 8 deep and its score tensors small, so LibTorch's
// per-op passes and dispatch, not arithmetic, took the time.
#include <ATen/core/Tensor.h>

namespace lrb {

// Whether the fused group applies: q, k, v CPU float32 with heads of 8, outside autocast.
bool blocked_small_head_applies(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v);

// Shapes, for a group of n query blocks of bq queries over `slots` keys each:
// qs [B, H, n, bq, 8] (q already scaled), kg, vg [B, H, n, slots, 8] (any strides),
// offsets float32 broadcastable to [B, H, n, bq, slots] (the key bias, -inf where a score is
// dropped); out [B, H, n, bq, 8] and lse [B, H, n, bq, 1] are written (views are fine).
// A row with every score dropped gives a zero output and lse = +inf.
void blocked_small_head_forward(const at::Tensor& qs, const at::Tensor& kg, const at::Tensor& vg,
                                const at::Tensor& offsets, at::Tensor& out, at::Tensor& lse);

// The gradients of the same group: dout [B, H, n, bq, 8], lse and delta (= sum(dout * out))
// [B, H, n, bq, 1]. Writes dq [B, H, n, bq, 8] (times `scale`: q's gradient, qs = scale q),
// and returns dkg, dvg [B, H, n, slots, 8] contiguous, for the layout to scatter.
void blocked_small_head_backward(const at::Tensor& qs, const at::Tensor& kg, const at::Tensor& vg,
                                 const at::Tensor& offsets, const at::Tensor& lse, const at::Tensor& delta,
                                 const at::Tensor& dout, double scale, at::Tensor& dq, at::Tensor& dkg,
                                 at::Tensor& dvg);

}  // namespace lrb
