#pragma once
// Retention (RetNet, arXiv 2307.08621), the well-defined core of decayed linear attention:
//   parallel    O = (Q K^T (.) D) V,  D[n,m] = gamma^(n-m) for n >= m, else 0
//   recurrent   S_n = gamma S_(n-1) + k_n^T v_n,  o_n = q_n S_n
//   chunkwise   inside a chunk the parallel form, across chunks the recurrent state.
// The three forms compute the same function (they agree to rounding). Per-head decay
// gamma_h = 1 - 2^(-5-h), h = 0..H-1. No scaling or normalisation is applied (RetNet scales
// q and normalises outside the core). A key padding mask zeroes the masked keys, so they
// contribute nothing; the forms are causal, so queries need Nq == Nk.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>

namespace lrb {

enum class RetentionForm { Parallel, Recurrent, Chunkwise };
RetentionForm parse_retention_form(const std::string& name);  // parallel | recurrent | chunkwise

// gamma_h = 1 - 2^(-5-h) as float64 [H].
at::Tensor retention_decays(std::int64_t heads);

// q, k, v [B, H, N, d]; mask [B, N] bool (true = real token); gammas float [H] or
// undefined for retention_decays(H). Decays are constants (not differentiated).
// Parallel: O(N^2) time and memory (the D and score matrices), autograd through ops.
at::Tensor retention_parallel(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                              const at::Tensor& mask = {}, const at::Tensor& gammas = {});
// Recurrent: one token at a time with a [d, dv] state per head. A custom autograd Function:
// the backward reruns the recurrence forwards (for dq) and backwards (for dk, dv), so
// memory stays O(B*H*(N*d + d*dv)) in training too, where autograd over the loop would
// keep N states. Time O(N*d*dv) but N sequential steps of small ops.
at::Tensor retention_recurrent(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                               const at::Tensor& mask = {}, const at::Tensor& gammas = {});
// Chunkwise: chunks of `chunk` tokens; memory O(B*H*(N*chunk + N/chunk*d*dv)), autograd
// through ops (a sequential loop over chunks only for the d x dv states).
at::Tensor retention_chunkwise(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                               const at::Tensor& mask = {}, std::int64_t chunk = 64,
                               const at::Tensor& gammas = {});

at::Tensor retention(RetentionForm form, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                     const at::Tensor& mask = {}, std::int64_t chunk = 64, const at::Tensor& gammas = {});

// Query-key scores computed over the batch: parallel B*H*N^2; chunkwise B*H*ceil(N/c)*c^2
// (the state terms are d x dv products, not scores); recurrent 0.
std::int64_t retention_score_elements(RetentionForm form, std::int64_t batch, std::int64_t heads,
                                      std::int64_t tokens, std::int64_t chunk = 64);

}  // namespace lrb
