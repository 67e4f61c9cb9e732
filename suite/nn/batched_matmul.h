#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace lrb {

// a @ b over the last two dimensions, the leading (batch) dimensions broadcast as at::matmul
// broadcasts them; a and b have the same number of dimensions (>= 3). Same values and
// gradients as at::matmul, which it falls back to outside its fast path.
//
// Why it exists: LibTorch 1.13's CPU bmm, built without MKL (Debian's), loops over the batch
// through the dispatcher (select, select, addmm per matrix: microseconds each), which costs
// more than the product itself for the attention kernels' many small matrices (a head of 8
// or a block of 14 rows). The fast path calls the process's BLAS (sgemm_/dgemm_, the same
// library LibTorch's own products use) once per matrix on the operands' own strides:
// transposed and broadcast operands are never copied. It applies to CPU float32/float64
// tensors outside autocast, when the process has a BLAS with those symbols; elsewhere (GPU,
// bf16, a LibTorch with its BLAS linked in privately) it is at::matmul.
at::Tensor batched_matmul(const at::Tensor& a, const at::Tensor& b);

// out += a @ b without a temporary: BLAS adds each product into out's matrix (beta = 1), one
// matrix after another in batch order, so out's matrices may overlap (a sliding window's
// key gradients: each window adds to rows the previous one reached). out has the broadcast
// batch shape of a and b and contiguous rows, and shares no memory with them. Not
// differentiable: it does not apply while autograd records an operand. Only where
// batched_matmul_accumulate_applies (the CPU fast path); elsewhere add a product yourself.
bool batched_matmul_accumulate_applies(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b);
void batched_matmul_accumulate(at::Tensor& out, const at::Tensor& a, const at::Tensor& b);

// C = alpha op(A) op(B) + beta C on row-major matrices, through the process's BLAS as the
// fast path calls it: op(A) is m x k, op(B) k x n, C m x n; trans_a (trans_b) says A (B) is
// stored as op(A)^T (op(B)^T); lda, ldb and ldc are the stored matrices' row strides. For the
// CPU kernels that walk their own blocks (retention's chunks). Only where
// batched_matmul_has_blas(), with every size and stride within BLAS's 32-bit integers.
template <typename T>
void gemm_rows(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* a,
               std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c, std::int64_t ldc);

// Whether this process has the BLAS the fast path calls (tests assert it where Debian's
// LibTorch is used; `lrbench doctor` could say so).
bool batched_matmul_has_blas();

// Whether CPU autocast is on in this thread. The CPU fast paths here and in
// attention/small_head_softmax.h leave products under autocast to LibTorch, which runs them in
// the autocast type. (suite/runtime's torch_compat::autocast_enabled says the same, but
// suite/nn may not use suite/runtime.)
bool cpu_autocast_active();

}  // namespace lrb
