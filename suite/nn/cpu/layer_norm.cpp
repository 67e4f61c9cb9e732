#include "suite/nn/cpu/layer_norm.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/record_function.h>
#include <torch/csrc/autograd/custom_function.h>

#include <cmath>
#include <cstring>

#include "suite/core/errors.h"
#include "suite/nn/cpu/simd.h"

namespace lrb {
namespace {

using index_t = std::int64_t;

using vec8::lane_sum;
using vec8::load8;
using vec8::store8;
using vec8::V8;

// Rows [0, rows) of d floats (d a multiple of 8): y = (x - mean) * rstd * w + b. The mean,
// then the variance of the centred row, each summed in eight lanes.
LRB_INLINE void normalise_rows_of(const float* __restrict x, const float* __restrict w, const float* __restrict b,
                                  float* __restrict y, float* __restrict mean, float* __restrict rstd, index_t rows,
                                  index_t d, float eps) {
  const float inv_d = 1.0f / static_cast<float>(d);
  for (index_t r = 0; r < rows; ++r) {
    const float* xr = x + r * d;
    float* yr = y + r * d;
    V8 sum{};
    for (index_t c = 0; c < d; c += 8) sum += load8(xr + c);
    const float m = lane_sum(sum) * inv_d;
    V8 squares{};
    for (index_t c = 0; c < d; c += 8) {
      const V8 centred = load8(xr + c) - m;
      squares += centred * centred;
    }
    const float rs = 1.0f / std::sqrt(lane_sum(squares) * inv_d + eps);
    for (index_t c = 0; c < d; c += 8) {
      store8(yr + c, (load8(xr + c) - m) * rs * load8(w + c) + load8(b + c));
    }
    mean[r] = m;
    rstd[r] = rs;
  }
}

// AVX2 (no FMA) or the baseline: both copies round alike.
LRB_SIMD_EXACT_DISPATCH(normalise_rows, normalise_rows_of)

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct RowLayerNorm : public torch::autograd::Function<RowLayerNorm> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& input, const at::Tensor& weight,
                            const at::Tensor& bias, double eps) {
    const at::Tensor x = input.contiguous();
    const index_t d = x.size(-1), rows = x.numel() / d;
    at::Tensor y = at::empty_like(x, at::MemoryFormat::Contiguous);
    // LibTorch's layout of the saved statistics: the input's shape with the normalised dim 1.
    std::vector<std::int64_t> stat_shape = x.sizes().vec();
    stat_shape.back() = 1;
    at::Tensor mean = at::empty(stat_shape, x.options()), rstd = at::empty(stat_shape, x.options());
    const float* xp = x.data_ptr<float>();
    const float* wp = weight.data_ptr<float>();
    const float* bp = bias.data_ptr<float>();
    float* yp = y.data_ptr<float>();
    float* mp = mean.data_ptr<float>();
    float* rp = rstd.data_ptr<float>();
    at::parallel_for(0, rows, 256, [&](index_t begin, index_t end) {
      normalise_rows(xp + begin * d, wp, bp, yp + begin * d, mp + begin, rp + begin, end - begin, d,
                     static_cast<float>(eps));
    });
    // The input as given: a contiguous copy of a strided one would stay alive until the backward,
    // where LibTorch's kernel makes its own.
    ctx->save_for_backward({input, mean, rstd, weight, bias});
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &x = saved[0], &mean = saved[1], &rstd = saved[2], &weight = saved[3], &bias = saved[4];
    const std::array<bool, 3> mask{ctx->needs_input_grad(0), ctx->needs_input_grad(1), ctx->needs_input_grad(2)};
    auto g = at::native_layer_norm_backward(grads[0].contiguous(), x, {x.size(-1)}, mean, rstd, weight, bias, mask);
    return {std::get<0>(g), std::get<1>(g), std::get<2>(g), at::Tensor()};
  }
};

bool row_path_applies(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  auto float_cpu = [](const at::Tensor& t) {
    return t.device().is_cpu() && t.layout() == at::kStrided && t.scalar_type() == at::kFloat;
  };
  // Both affine parameters: LibTorch 1.13's custom functions refuse an undefined input.
  return !layer_norm_use_libtorch() && x.dim() >= 1 && float_cpu(x) && x.size(-1) % 8 == 0 && x.size(-1) > 0 &&
         x.numel() > 0 && weight.defined() && bias.defined() && float_cpu(weight) && weight.is_contiguous() &&
         float_cpu(bias) && bias.is_contiguous();
}

}  // namespace

bool& layer_norm_use_libtorch() {
  static bool use = false;
  return use;
}

at::Tensor layer_norm(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, double eps) {
  if (!row_path_applies(x, weight, bias)) return at::layer_norm(x, {x.size(-1)}, weight, bias, eps);
  LRB_CHECK(!weight.defined() || weight.numel() == x.size(-1), "layer_norm: weight must have the last dim's size");
  LRB_CHECK(!bias.defined() || bias.numel() == x.size(-1), "layer_norm: bias must have the last dim's size");
  RECORD_FUNCTION("lrb::layer_norm", std::vector<c10::IValue>({x}));  // for the profiler
  return RowLayerNorm::apply(x, weight, bias, eps);
}

LayerNormImpl::LayerNormImpl(torch::nn::LayerNormOptions options_) : options(std::move(options_)) { reset(); }

void LayerNormImpl::reset() {
  LRB_CHECK(options.normalized_shape().size() == 1, "lrb::LayerNorm normalises the last dimension only");
  if (options.elementwise_affine()) {
    weight = register_parameter("weight", at::ones(options.normalized_shape()));
    bias = register_parameter("bias", at::zeros(options.normalized_shape()));
  } else {
    weight = register_parameter("weight", at::Tensor(), /*requires_grad=*/false);
    bias = register_parameter("bias", at::Tensor(), /*requires_grad=*/false);
  }
}

at::Tensor LayerNormImpl::forward(const at::Tensor& x) { return lrb::layer_norm(x, weight, bias, options.eps()); }

}  // namespace lrb
