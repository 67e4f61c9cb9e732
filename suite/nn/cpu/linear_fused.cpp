#include "suite/nn/cpu/linear_fused.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/record_function.h>
#include <torch/csrc/autograd/custom_function.h>

#include <atomic>
#include <cmath>
#include <vector>

#include "suite/core/errors.h"
#include "suite/nn/batched_matmul.h"
#include "suite/nn/cpu/simd.h"

namespace lrb {
namespace {

using index_t = std::int64_t;

std::atomic<bool> force_general{false};

// Elements (or rows) per task of at::parallel_for: a pass over fewer is not worth a thread.
constexpr index_t kGrain = index_t{1} << 15;

struct EluArgs {
  const float* x;
  float* y;
  index_t n;
};

// psi(x) = elu(x) + 1 = x + 1 above 0, exp(x) at or below (vec8's exp, relative error ~1e-7;
// NaN stays NaN), W floats at a time (16 where the processor has AVX-512: the exp is most of
// the pass).
template <int W>
LRB_INLINE void elu_plus_one_floats(const EluArgs& a) {
  using V = typename vec8::Lanes<W>::V;
  index_t i = 0;
  for (; i + W <= a.n; i += W) {
    const V x = vec8::load_lanes<V>(a.x + i);
    const V e = vec8::exp_lanes<W>(x > 0.0f ? V{} : x);
    vec8::store_lanes(a.y + i, x > 0.0f ? x + 1.0f : e);
  }
  for (; i < a.n; ++i) a.y[i] = a.x[i] > 0.0f ? a.x[i] + 1.0f : vec8::exp_nonpositive(a.x[i]);
}
LRB_SIMD_WIDE_DISPATCH(elu_plus_one_floats, EluArgs)

void elu_plus_one_range(const float* x, float* y, index_t n) { elu_plus_one_floats_any({x, y, n}); }
void elu_plus_one_range(const double* x, double* y, index_t n) {
  for (index_t i = 0; i < n; ++i) y[i] = x[i] > 0 ? x[i] + 1 : std::exp(x[i]);
}

struct EluGradArgs {
  const float* y;
  const float* g;
  float* dx;
  index_t n;
};

// dx = g * min(psi, 1), W floats at a time: a select, not a branch (psi's side of 1 is as
// random as the inputs' signs).
template <int W>
LRB_INLINE void elu_plus_one_grad_floats(const EluGradArgs& a) {
  using V = typename vec8::Lanes<W>::V;
  index_t i = 0;
  for (; i + W <= a.n; i += W) {
    const V y = vec8::load_lanes<V>(a.y + i);
    vec8::store_lanes(a.dx + i, vec8::load_lanes<V>(a.g + i) * (y > 1.0f ? V{} + 1.0f : y));
  }
  for (; i < a.n; ++i) a.dx[i] = a.g[i] * (a.y[i] > 1.0f ? 1.0f : a.y[i]);
}
LRB_SIMD_WIDE_DISPATCH(elu_plus_one_grad_floats, EluGradArgs)

void elu_plus_one_grad_range(const float* y, const float* g, float* dx, index_t n) {
  elu_plus_one_grad_floats_any({y, g, dx, n});
}
void elu_plus_one_grad_range(const double* y, const double* g, double* dx, index_t n) {
  for (index_t i = 0; i < n; ++i) dx[i] = g[i] * (y[i] > 1 ? 1.0 : y[i]);
}

at::Tensor elu_plus_one_forward(const at::Tensor& x) {
  at::Tensor y = at::empty(x.sizes(), x.options().memory_format(at::MemoryFormat::Contiguous));
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "elu_plus_one", [&] {
    const scalar_t* in = x.data_ptr<scalar_t>();
    scalar_t* out = y.data_ptr<scalar_t>();
    at::parallel_for(0, x.numel(), kGrain,
                     [&](index_t begin, index_t end) { elu_plus_one_range(in + begin, out + begin, end - begin); });
  });
  return y;
}

// The rows of numden [rows, dv + 1], each divided by its last element plus eps.
at::Tensor divide_forward(const at::Tensor& numden, double eps) {
  const index_t width = numden.size(-1), dv = width - 1, rows = numden.numel() / width;
  std::vector<int64_t> sizes = numden.sizes().vec();
  sizes.back() = dv;
  at::Tensor out = at::empty(sizes, numden.options());
  AT_DISPATCH_FLOATING_TYPES(numden.scalar_type(), "divide_by_last_column", [&] {
    const scalar_t* nd = numden.data_ptr<scalar_t>();
    scalar_t* o = out.data_ptr<scalar_t>();
    const auto e = static_cast<scalar_t>(eps);
    at::parallel_for(0, rows, kGrain / width + 1, [&](index_t begin, index_t end) {
      for (index_t r = begin; r < end; ++r) {
        const scalar_t* s = nd + r * width;
        const scalar_t den = s[dv] + e;
        scalar_t* row = o + r * dv;
        for (index_t j = 0; j < dv; ++j) row[j] = s[j] / den;
      }
    });
  });
  return out;
}

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct EluPlusOneFunction : public torch::autograd::Function<EluPlusOneFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x) {
    at::Tensor y = elu_plus_one_forward(x.contiguous());
    ctx->save_for_backward({y});
    return y;
  }

  // d psi / dx = 1 above 0 and exp(x) = psi(x) at or below: min(psi(x), 1) (NaN stays NaN).
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const at::Tensor y = ctx->get_saved_variables()[0];
    const at::Tensor g = grads[0].to(y.scalar_type()).contiguous();
    at::Tensor dx = at::empty_like(y);
    AT_DISPATCH_FLOATING_TYPES(y.scalar_type(), "elu_plus_one_backward", [&] {
      const scalar_t* py = y.data_ptr<scalar_t>();
      const scalar_t* pg = g.data_ptr<scalar_t>();
      scalar_t* pd = dx.data_ptr<scalar_t>();
      at::parallel_for(0, y.numel(), kGrain, [&](index_t begin, index_t end) {
        elu_plus_one_grad_range(py + begin, pg + begin, pd + begin, end - begin);
      });
    });
    return {dx};
  }
};

struct DivideByLastColumnFunction : public torch::autograd::Function<DivideByLastColumnFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& numden, double eps) {
    const at::Tensor nd = numden.contiguous();
    ctx->save_for_backward({nd});
    ctx->saved_data["eps"] = eps;
    return divide_forward(nd, eps);
  }

  // out_j = s_j / den, den = s_dv + eps: d/ds_j = g_j / den, d/ds_dv = -sum_j g_j s_j / den^2.
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const at::Tensor nd = ctx->get_saved_variables()[0];
    const double eps = ctx->saved_data["eps"].toDouble();
    const at::Tensor g = grads[0].to(nd.scalar_type()).contiguous();
    const index_t width = nd.size(-1), dv = width - 1, rows = nd.numel() / width;
    at::Tensor dnd = at::empty_like(nd);
    AT_DISPATCH_FLOATING_TYPES(nd.scalar_type(), "divide_by_last_column_backward", [&] {
      const scalar_t* s_all = nd.data_ptr<scalar_t>();
      const scalar_t* g_all = g.data_ptr<scalar_t>();
      scalar_t* d_all = dnd.data_ptr<scalar_t>();
      const auto e = static_cast<scalar_t>(eps);
      at::parallel_for(0, rows, kGrain / width + 1, [&](index_t begin, index_t end) {
        for (index_t r = begin; r < end; ++r) {
          const scalar_t* s = s_all + r * width;
          const scalar_t* gr = g_all + r * dv;
          scalar_t* d = d_all + r * width;
          const scalar_t den = s[dv] + e;
          scalar_t weighted = 0;
          for (index_t j = 0; j < dv; ++j) {
            d[j] = gr[j] / den;
            weighted += gr[j] * s[j];
          }
          d[dv] = -weighted / (den * den);
        }
      });
    });
    return {dnd, at::Tensor()};
  }
};

bool needs_grad(const at::Tensor& x) { return at::GradMode::is_enabled() && x.requires_grad(); }

}  // namespace

bool linear_fused_applies(const at::Tensor& x) {
  if (force_general.load(std::memory_order_relaxed) || cpu_autocast_active()) return false;
  return x.defined() && x.device().is_cpu() && x.layout() == at::kStrided && !x.is_neg() && !x.is_conj() &&
         (x.scalar_type() == at::kFloat || x.scalar_type() == at::kDouble);
}

at::Tensor elu_plus_one(const at::Tensor& x) {
  LRB_CHECK(linear_fused_applies(x), "elu_plus_one: operand outside its fast path");
  // Named in LibTorch's profiler (a custom function's forward is not an op of its own).
  RECORD_FUNCTION("lrb::elu_plus_one", std::vector<c10::IValue>({x}));
  return needs_grad(x) ? EluPlusOneFunction::apply(x) : elu_plus_one_forward(x.contiguous());
}

at::Tensor divide_by_last_column(const at::Tensor& numden, double eps) {
  LRB_CHECK(linear_fused_applies(numden) && numden.dim() >= 1 && numden.size(-1) >= 2,
            "divide_by_last_column: operand outside its fast path");
  RECORD_FUNCTION("lrb::divide_by_last_column", std::vector<c10::IValue>({numden}));
  return needs_grad(numden) ? DivideByLastColumnFunction::apply(numden, eps)
                            : divide_forward(numden.contiguous(), eps);
}

bool linear_attention_use_general_path(bool general) { return force_general.exchange(general); }

}  // namespace lrb
