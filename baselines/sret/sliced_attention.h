#pragma once
// SReT's sliced group self-attention (arXiv 2111.05297, Sec. 3.3; szq0214/SReT,
// Group_Attention): the N tokens are cut into g contiguous groups of N / g, each attends
// within itself, and the outputs are put back in token order. A recursive pass first
// permutes the tokens at random (and undoes the permutation afterwards), so its groups mix
// tokens from the whole sequence; that permutation is the caller's.
#include <ATen/core/Tensor.h>

#include <cstdint>

namespace lrb {

// q, k, v [B, H, N, d] with N divisible by `groups`; sizes [B, N] (token sizes after a merge:
// proportional attention inside each group) or undefined (plain softmax).
at::Tensor sliced_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, std::int64_t groups,
                            const at::Tensor& sizes = {});

}  // namespace lrb
