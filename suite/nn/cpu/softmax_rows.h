#pragma once
// The row passes of the blocked softmax engine (blocked_attention.cpp) for any head size, fused
// on the CPU. Between its products a group of query blocks made about five LibTorch passes
// over its scores forward (add the bias, drop, max, exp, sum, divide) and four backward; for
// the chunked full softmax and the sparse kernels at d = 64 these passes and libm-style exp
// were a quarter to a third of the kernel's time. Here each is one call that walks a row at
// a time while it sits in the L1 cache: the offsets, the maximum, exp and its sum, the
// division and the log-sum-exp forward; exp(s - lse) backward; (dP - delta) * P for the
// scores' gradient. 16 floats a vector where the processor has AVX-512, else 8 (AVX2 + FMA,
// or the baseline x86-64). Heads of 8 have their own fused group (blocked_small_head.h).
#include <ATen/core/Tensor.h>

namespace lrb {

// Whether the fused row passes take a group's scores s: a CPU contiguous float32 tensor,
// outside CPU autocast, not part of a graph being recorded, and not forced off by
// softmax_rows_use_general_path.
bool softmax_rows_fused_applies(const at::Tensor& s);

// In place over the rows of s [..., keys] (of softmax_rows_fused_applies): each row becomes
// softmax(s + bias) over its keys that `drop` does not drop, 0 where dropped; lse [..., 1]
// (a float32 view, any strides) gets the row's log-sum-exp. A row with every key dropped
// becomes zeros and its lse +inf (so the backward's exp(s - lse) is 0 there too). bias
// (float) and drop (bool, true = drop) broadcast to s, either may be undefined.
void softmax_rows_forward(at::Tensor& s, const at::Tensor& bias, const at::Tensor& drop, at::Tensor& lse);

// In place: s <- exp(s + bias - lse), 0 where dropped: the probabilities again from the
// scores and the forward's lse.
void softmax_rows_recompute(at::Tensor& s, const at::Tensor& bias, const at::Tensor& drop, const at::Tensor& lse);

// In place: ds <- (ds - delta) * p, the scores' gradient from the probabilities' gradient
// dP (in ds), p (shaped like ds) and delta [..., 1] = sum_j P_ij dP_ij (any strides).
void softmax_rows_score_gradient(at::Tensor& ds, const at::Tensor& p, const at::Tensor& delta);

// For tests: take LibTorch's ops (true) even where the fused row passes apply, or the fused
// passes where they apply (false, the default). Returns the previous setting.
bool softmax_rows_use_general_path(bool general);

}  // namespace lrb
