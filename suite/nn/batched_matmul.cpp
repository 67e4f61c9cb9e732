#include "suite/nn/batched_matmul.h"

#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <dlfcn.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <climits>
#include <optional>
#include <vector>

#include "suite/core/errors.h"

namespace lrb {
namespace {

// The Fortran BLAS interface (LP64: 32-bit integers), as LibTorch itself calls it.
template <typename T>
using GemmFn = void (*)(const char* transa, const char* transb, const int* m, const int* n, const int* k,
                        const T* alpha, const T* a, const int* lda, const T* b, const int* ldb, const T* beta, T* c,
                        const int* ldc);

struct ProcessBlas {
  GemmFn<float> sgemm = nullptr;
  GemmFn<double> dgemm = nullptr;
};

// Looked up once, in the libraries already loaded (LibTorch's BLAS), never loaded here.
const ProcessBlas& process_blas() {
  static const ProcessBlas blas = [] {
    ProcessBlas b;
    b.sgemm = reinterpret_cast<GemmFn<float>>(dlsym(RTLD_DEFAULT, "sgemm_"));
    b.dgemm = reinterpret_cast<GemmFn<double>>(dlsym(RTLD_DEFAULT, "dgemm_"));
    return b;
  }();
  return blas;
}

template <typename T>
GemmFn<T> gemm_for();
template <>
GemmFn<float> gemm_for<float>() { return process_blas().sgemm; }
template <>
GemmFn<double> gemm_for<double>() { return process_blas().dgemm; }

bool fits_int(std::int64_t v) { return v >= 0 && v <= INT_MAX; }

// How BLAS (column-major) reads a row-major matrix X [rows, cols] with strides (s0, s1):
// 'N' when its rows are contiguous (BLAS sees X^T, leading dimension s0), 'T' when its
// columns are (BLAS sees X, leading dimension s1). Strides of a dimension of size 1 are
// free, as LibTorch's own gemm treats them.
struct BlasOperand {
  char trans;
  std::int64_t ld;
};

std::optional<BlasOperand> blas_operand(std::int64_t rows, std::int64_t cols, std::int64_t s0, std::int64_t s1) {
  if ((cols == 1 || s1 == 1) && (rows == 1 || s0 >= std::max<std::int64_t>(1, cols)))
    return BlasOperand{'N', rows == 1 ? std::max<std::int64_t>(1, cols) : s0};
  if ((rows == 1 || s0 == 1) && (cols == 1 || s1 >= std::max<std::int64_t>(1, rows)))
    return BlasOperand{'T', cols == 1 ? std::max<std::int64_t>(1, rows) : s1};
  return std::nullopt;
}

std::optional<BlasOperand> operand_of(const at::Tensor& x) {
  return blas_operand(x.size(-2), x.size(-1), x.stride(-2), x.stride(-1));
}

bool batch_dims_broadcast(const at::Tensor& a, const at::Tensor& b) {
  for (std::int64_t i = 0; i + 2 < a.dim(); ++i)
    if (a.size(i) != b.size(i) && a.size(i) != 1 && b.size(i) != 1) return false;
  return true;
}

bool on_fast_path(const at::Tensor& a, const at::Tensor& b) {
  if (!a.defined() || !b.defined() || a.dim() != b.dim() || a.dim() < 3) return false;
  if (!a.device().is_cpu() || !b.device().is_cpu() || a.layout() != at::kStrided || b.layout() != at::kStrided)
    return false;
  const auto type = a.scalar_type();
  if (type != b.scalar_type()) return false;
  if (type == at::kFloat ? !process_blas().sgemm : type == at::kDouble ? !process_blas().dgemm : true) return false;
  if (a.is_neg() || b.is_neg()) return false;
  // Under CPU autocast at::matmul runs in the autocast type: leave it to at::matmul.
  if (cpu_autocast_active()) return false;
  if (a.size(-1) != b.size(-2) || !batch_dims_broadcast(a, b)) return false;  // at::matmul says what is wrong
  return fits_int(a.size(-2)) && fits_int(a.size(-1)) && fits_int(b.size(-1));
}

// out = a b + beta out, one matrix after another in batch order (so out's matrices may
// overlap: each product adds to what the previous ones left). a, b and out are expanded to
// the same batch shape; out's rows are contiguous (BLAS's leading dimension is its row stride).
template <typename T>
void gemm_each(const at::Tensor& a, const at::Tensor& b, at::Tensor& out, T beta) {
  const std::int64_t m = a.size(-2), k = a.size(-1), n = b.size(-1), batch_dims = out.dim() - 2;
  const BlasOperand oa = *operand_of(a), ob = *operand_of(b);
  // Row-major C = A B is column-major C^T = B^T A^T: b is BLAS's first operand.
  const int im = static_cast<int>(n), in = static_cast<int>(m), ik = static_cast<int>(k);
  const int lda = static_cast<int>(ob.ld), ldb = static_cast<int>(oa.ld);
  const int ldc = static_cast<int>(m == 1 ? std::max<std::int64_t>(1, n) : out.stride(-2));
  const T one = 1;
  const GemmFn<T> gemm = gemm_for<T>();
  const T* pa = a.data_ptr<T>();
  const T* pb = b.data_ptr<T>();
  T* pc = out.data_ptr<T>();
  std::vector<std::int64_t> index(static_cast<std::size_t>(batch_dims), 0);
  const std::int64_t count = out.numel() / (m * n);
  std::int64_t offset_a = 0, offset_b = 0, offset_c = 0;
  for (std::int64_t i = 0; i < count; ++i) {
    gemm(&ob.trans, &oa.trans, &im, &in, &ik, &one, pb + offset_b, &lda, pa + offset_a, &ldb, &beta, pc + offset_c,
         &ldc);
    // The next batch index, innermost first; a and b were expanded, so a broadcast dimension
    // has stride 0 and its matrix is reused, not copied.
    for (std::int64_t d = batch_dims - 1; d >= 0; --d) {
      const auto du = static_cast<std::size_t>(d);
      offset_a += a.stride(d);
      offset_b += b.stride(d);
      offset_c += out.stride(d);
      if (++index[du] < out.size(d)) break;
      offset_a -= a.stride(d) * out.size(d);
      offset_b -= b.stride(d) * out.size(d);
      offset_c -= out.stride(d) * out.size(d);
      index[du] = 0;
    }
  }
}

// x itself where BLAS can read its matrices in place, else a contiguous copy.
at::Tensor readable_by_blas(const at::Tensor& x) {
  const auto operand = operand_of(x);
  return operand && fits_int(operand->ld) ? x : x.contiguous();
}

at::Tensor blas_product(const at::Tensor& a_in, const at::Tensor& b_in) {
  const at::Tensor a = readable_by_blas(a_in), b = readable_by_blas(b_in);
  std::vector<std::int64_t> batch(a.sizes().begin(), a.sizes().end() - 2);
  for (std::size_t i = 0; i < batch.size(); ++i)
    if (batch[i] == 1) batch[i] = b.size(static_cast<std::int64_t>(i));
  std::vector<std::int64_t> shape_a = batch, shape_b = batch, shape_out = batch;
  shape_a.insert(shape_a.end(), {a.size(-2), a.size(-1)});
  shape_b.insert(shape_b.end(), {b.size(-2), b.size(-1)});
  shape_out.insert(shape_out.end(), {a.size(-2), b.size(-1)});
  at::Tensor out = at::empty(shape_out, a.options().memory_format(at::MemoryFormat::Contiguous));
  if (out.numel() == 0) return out;
  if (a.size(-1) == 0) return out.zero_();
  const at::Tensor ae = a.expand(shape_a), be = b.expand(shape_b);
  if (a.scalar_type() == at::kFloat)
    gemm_each<float>(ae, be, out, 0.0f);
  else
    gemm_each<double>(ae, be, out, 0.0);
  return out;
}

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Whether x is a transposed view: its columns' elements adjacent, its rows' strided.
bool transposed_layout(const at::Tensor& x) {
  return x.size(-1) > 1 && x.size(-2) > 1 && x.stride(-2) == 1 && x.stride(-1) != 1;
}

// The gradients of a broadcast product, as at::matmul's: dA = dC B^T and dB = A^T dC, summed
// over the batch dimensions an operand was broadcast along. A gradient comes in its operand's
// layout (as LibTorch's mm backward does): for a transposed view A = X^T the product computes
// dA^T = B dC^T, so X's gradient is contiguous; dC B^T would reach X as a transposed view,
// and whatever adds or copies it next pays a strided pass over N x d elements.
struct BatchedMatmulFunction : public torch::autograd::Function<BatchedMatmulFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& a, const at::Tensor& b) {
    ctx->save_for_backward({a, b});
    return blas_product(a, b);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &a = saved[0], &b = saved[1], &grad = grads[0];
    at::Tensor da, db;
    if (ctx->needs_input_grad(0))
      da = (transposed_layout(a) ? batched_matmul(b, grad.transpose(-2, -1)).transpose(-2, -1)
                                 : batched_matmul(grad, b.transpose(-2, -1)))
               .sum_to_size(a.sizes());
    if (ctx->needs_input_grad(1))
      db = (transposed_layout(b) ? batched_matmul(grad.transpose(-2, -1), a).transpose(-2, -1)
                                 : batched_matmul(a.transpose(-2, -1), grad))
               .sum_to_size(b.sizes());
    return {da, db};
  }
};

}  // namespace

at::Tensor batched_matmul(const at::Tensor& a, const at::Tensor& b) {
  if (!on_fast_path(a, b)) return at::matmul(a, b);
  RECORD_FUNCTION("lrb::batched_matmul", std::vector<c10::IValue>({a, b}));  // for the profiler
  if (at::GradMode::is_enabled() && (a.requires_grad() || b.requires_grad()))
    return BatchedMatmulFunction::apply(a, b);
  return blas_product(a, b);
}

bool batched_matmul_accumulate_applies(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b) {
  if (!on_fast_path(a, b) || !out.defined() || !out.device().is_cpu() || out.layout() != at::kStrided ||
      out.scalar_type() != a.scalar_type() || out.dim() != a.dim() || out.is_neg())
    return false;
  // Recording a graph (a backward run with create_graph): the caller's differentiable ops.
  if (at::GradMode::is_enabled() && (out.requires_grad() || a.requires_grad() || b.requires_grad())) return false;
  for (std::int64_t i = 0; i + 2 < out.dim(); ++i)
    if (out.size(i) != std::max(a.size(i), b.size(i))) return false;  // out is never broadcast
  if (out.size(-2) != a.size(-2) || out.size(-1) != b.size(-1)) return false;
  // Rows contiguous, one after another at a stride BLAS can take.
  return (out.size(-1) == 1 || out.stride(-1) == 1) &&
         (out.size(-2) == 1 || (out.stride(-2) >= out.size(-1) && fits_int(out.stride(-2))));
}

void batched_matmul_accumulate(at::Tensor& out, const at::Tensor& a_in, const at::Tensor& b_in) {
  LRB_CHECK(batched_matmul_accumulate_applies(out, a_in, b_in), "batched_matmul_accumulate: operands outside its path");
  RECORD_FUNCTION("lrb::batched_matmul_accumulate", std::vector<c10::IValue>({out, a_in, b_in}));
  if (out.numel() == 0 || a_in.size(-1) == 0) return;
  const at::Tensor a = readable_by_blas(a_in), b = readable_by_blas(b_in);
  std::vector<std::int64_t> shape_a = out.sizes().vec(), shape_b = out.sizes().vec();
  shape_a[shape_a.size() - 1] = a.size(-1);
  shape_b[shape_b.size() - 2] = b.size(-2);
  if (a.scalar_type() == at::kFloat)
    gemm_each<float>(a.expand(shape_a), b.expand(shape_b), out, 1.0f);
  else
    gemm_each<double>(a.expand(shape_a), b.expand(shape_b), out, 1.0);
}

bool cpu_autocast_active() {
  // On unless its key is excluded, as at::autocast::is_cpu_enabled reads it.
  return !c10::impl::tls_is_dispatch_key_excluded(c10::DispatchKey::AutocastCPU);
}

template <typename T>
void gemm_rows(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* a,
               std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c, std::int64_t ldc) {
  const GemmFn<T> gemm = gemm_for<T>();
  LRB_CHECK(gemm != nullptr, "gemm_rows: this process has no BLAS with sgemm_/dgemm_");
  LRB_CHECK(fits_int(m) && fits_int(n) && fits_int(k) && fits_int(lda) && fits_int(ldb) && fits_int(ldc),
            "gemm_rows: a size or stride beyond BLAS's 32-bit integers");
  if (m == 0 || n == 0) return;
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: B is BLAS's first operand.
  const char tb = trans_b ? 'T' : 'N', ta = trans_a ? 'T' : 'N';
  const int im = static_cast<int>(n), in = static_cast<int>(m), ik = static_cast<int>(k);
  const int ib = static_cast<int>(std::max<std::int64_t>(1, ldb)), ia = static_cast<int>(std::max<std::int64_t>(1, lda));
  const int ic = static_cast<int>(std::max<std::int64_t>(1, ldc));
  gemm(&tb, &ta, &im, &in, &ik, &alpha, b, &ib, a, &ia, &beta, c, &ic);
}
template void gemm_rows<float>(bool, bool, std::int64_t, std::int64_t, std::int64_t, float, const float*,
                               std::int64_t, const float*, std::int64_t, float, float*, std::int64_t);
template void gemm_rows<double>(bool, bool, std::int64_t, std::int64_t, std::int64_t, double, const double*,
                                std::int64_t, const double*, std::int64_t, double, double*, std::int64_t);

bool batched_matmul_has_blas() { return process_blas().sgemm && process_blas().dgemm; }

}  // namespace lrb
