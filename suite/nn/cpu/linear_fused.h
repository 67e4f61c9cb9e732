#pragma once
// The elementwise passes of linear attention (linear.h) on the CPU, fused. Linear attention
// does few FLOPs (4 N d dv a head forward) between many passes over N x d tensors, so its
// time went to those passes: LibTorch's elu+1 was two passes forward and an elu backward that
// calls libm's expf one float at a time; the row normaliser Z' was a key sum, a
// matrix-vector product, an add and a division forward, and about five passes backward. Here
// psi = elu+1 is one vector pass each way (its derivative read from its output: min(psi, 1),
// no exp), and Z' rides in the output product as one more column (linear.cpp), divided out
// in one pass each way.
#include <ATen/core/Tensor.h>

namespace lrb {

// Whether the fused passes take x: a CPU strided float32 or float64 tensor, outside CPU
// autocast, and not forced off by linear_attention_use_general_path.
bool linear_fused_applies(const at::Tensor& x);

// elu(x) + 1, x of linear_fused_applies: exp(x) for x <= 0, x + 1 above. Differentiable once
// (the backward, grad * min(out, 1), is not itself differentiable).
at::Tensor elu_plus_one(const at::Tensor& x);

// numden [..., dv + 1] of linear_fused_applies: numden[..., :dv] / (numden[..., dv] + eps),
// [..., dv] (contiguous). Differentiable once.
at::Tensor divide_by_last_column(const at::Tensor& numden, double eps);

// For tests: take LibTorch's composition (true) even where the fused passes apply, or the
// fused passes where they apply (false, the default). Returns the previous setting.
bool linear_attention_use_general_path(bool general);

}  // namespace lrb
