#pragma once
// Full softmax attention (the reference every other kernel is checked against) and its
// query-chunked form.
#include <ATen/core/Tensor.h>

#include <cstdint>

namespace lrb {

// softmax(q k^T * scale + key_bias) v with masked keys excluded. q [B, H, Nq, d],
// k, v [B, H, Nk, d]; mask [B, Nk] bool (true = real token); key_bias [B, Nk] is added to
// every query's logits (not differentiated). scale 0 means 1/sqrt(d).
// Memory O(B*H*Nq*Nk) in training and inference. CPU float32 heads of 8 take the fused
// kernel (small_head_softmax.h), the rest autograd through LibTorch ops. A batch
// element with no real key at all gives zero rows (and zero gradients), never NaN.
at::Tensor softmax_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                             const at::Tensor& mask = {}, double scale = 0, const at::Tensor& key_bias = {});

// The same result computed `chunk` queries at a time. Forward and backward both run chunk by
// chunk (a custom autograd Function that recomputes each chunk's scores in the backward),
// so peak memory is O(B*H*chunk*Nk + B*H*N*d) in training as well as in inference, instead
// of O(B*H*Nq*Nk). (Plain autograd over a chunk loop would keep every chunk's probabilities
// for the backward, i.e. O(N^2) again in training.) Rows with no real key give zeros.
at::Tensor chunked_softmax_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                     const at::Tensor& mask = {}, std::int64_t chunk = 256, double scale = 0,
                                     const at::Tensor& key_bias = {});

// Query-key scores computed, over the whole batch: B*H*Nq*Nk (chunking changes memory,
// not the count; padding the last chunk's queries adds up to chunk-1 rows).
std::int64_t softmax_score_elements(std::int64_t batch, std::int64_t heads, std::int64_t q_tokens,
                                    std::int64_t k_tokens);
std::int64_t chunked_softmax_score_elements(std::int64_t batch, std::int64_t heads, std::int64_t q_tokens,
                                            std::int64_t k_tokens, std::int64_t chunk);

}  // namespace lrb
