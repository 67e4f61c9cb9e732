#pragma once
// The chunkwise retention's work across and inside its chunks (retention.h's chunkwise form):
// the scan that carries the d x dv state from chunk to chunk, and, on the CPU in float32 and
// float64, the whole form as one autograd node that walks each chunk while it is in cache.
#include <ATen/core/Tensor.h>

namespace lrb {

// Whether retention_chunks fuses its work for q: CPU float32 or float64, strided, outside
// autocast, with the BLAS the fast products call, and no test asking for the general path.
bool retention_chunks_fused_applies(const at::Tensor& q);

// The chunkwise form over zero-padded chunks: q, k [B, H, nc, C, d], v [B, H, nc, C, dv]; per
// head h, in q's dtype, inner [H, C, C] (gamma^(i - j) at i >= j, 0 above), key [H, C]
// (gamma^(C - 1 - j)), query [H, C] (gamma^(i + 1)) and chunk [H] (gamma^C). Returns
// [B, H, nc, C, dv]:
//   out_c = ((q_c k_c^T) . inner) v_c + (query . q_c) S_c,  S_(c+1) = chunk S_c + (key . k_c)^T v_c,
// S_0 = 0. Where retention_chunks_fused_applies to q, k and v, one autograd node that walks
// each chunk while it is in cache: the products LibTorch's ops make (twelve a chunk, less those
// with the first chunk's zero state and the last chunk's contribution, which no chunk reads),
// no pass over whole tensors between them; its backward under create_graph runs those ops, so
// second derivatives hold. Elsewhere (a GPU, reduced precision, autocast) the form
// composed of LibTorch's ops, its state scan one node.
at::Tensor retention_chunks(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& inner,
                            const at::Tensor& key, const at::Tensor& query, const at::Tensor& chunk);

// For tests: take the form composed of LibTorch's ops (true) even where the fused one applies,
// or the fused one (false, the default). Returns the previous setting.
bool retention_chunks_use_general_path(bool general);

}  // namespace lrb
