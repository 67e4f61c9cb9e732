#pragma once
// Full softmax attention for small heads on the CPU, fused: one pass per head that keeps a
// query row's scores in cache, instead of LibTorch's products and softmax over the whole
// [B, H, Nq, Nk] score tensor.
//
// Why it exists: with heads of 8 (the quickstart's Transformer: 4 heads of 8, 197 tokens)
// the products q k^T and p v are 8-deep, where a BLAS spends its time packing, and every
// pass over the scores (product, softmax, its backward, the two gradient products) streams
// B*H*Nq*Nk floats through memory. Here each row's scores are computed, normalised and used
// while they are in L1; only the probabilities are written once (saved for the backward,
// as LibTorch's path saves them), and the backward reads them once. Measured against
// LibTorch's path (tests/bench/small_products_bench.cpp, docs/benchmarks.md): at heads of
// 8 it is about 2x faster forward + backward; at 16 and 32 it was not faster, so it takes
// heads of 8 only.
#include <ATen/core/Tensor.h>

#include <cstdint>

namespace lrb {

// Whether fused_softmax_attention applies to these operands: CPU float32 strided tensors,
// outside autocast, q, k and v with heads of kFusedSoftmaxHeadDim. softmax_attention uses
// it then.
constexpr std::int64_t kFusedSoftmaxHeadDim = 8;
bool fused_softmax_applies(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v);

// softmax(q k^T * scale + key_bias) v, as softmax_attention defines it: q [B, H, Nq, 8],
// k, v [B, H, Nk, 8]; keep [B, Nk] bool (true = real key) or undefined; key_bias [B, Nk]
// float32 or undefined (not differentiated); scale > 0. A batch element with no kept key
// gives zero rows and zero gradients. Differentiable once (its backward is not itself
// differentiable). Saves q, k, v and the probabilities [B, H, Nq, Nk].
at::Tensor fused_softmax_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                   const at::Tensor& keep, double scale, const at::Tensor& key_bias);


}  // namespace lrb
