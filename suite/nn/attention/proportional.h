#pragma once
// ToMe's proportional attention: after merging, a token standing for s original tokens
// gets log s added to its key logit, so softmax weighs it as if it were s copies:
//   softmax(q k^T * scale + log s_j) v.
#include <ATen/core/Tensor.h>

#include <cstdint>

namespace lrb {

// q [B, H, Nq, d], k, v [B, H, Nk, d]; sizes [B, Nk] > 0 (token sizes; not differentiated);
// mask [B, Nk] bool, true = real token. chunk 0: full attention through autograd;
// chunk > 0: the query-chunked custom-backward path (softmax.h), O(N*chunk) memory.
at::Tensor proportional_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                  const at::Tensor& sizes, const at::Tensor& mask = {}, std::int64_t chunk = 0,
                                  double scale = 0);

}  // namespace lrb
