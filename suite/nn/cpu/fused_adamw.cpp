#include "suite/nn/cpu/fused_adamw.h"

#include <ATen/ATen.h>
#include <torch/types.h>  // clip_grad.h uses torch::Tensor without including it
#include <torch/nn/utils/clip_grad.h>

#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>

#include "suite/nn/cpu/simd.h"

namespace lrb {
namespace {

using torch::optim::AdamWOptions;
using torch::optim::AdamWParamState;

// The key LibTorch's optimizers file a parameter's state under: its TensorImpl, printed
// (1.13: std::string, as c10::guts::to_string prints it) or the pointer itself (2.x).
template <typename Key>
Key state_key(const at::Tensor& p) {
  if constexpr (std::is_same_v<Key, std::string>) {
    std::ostringstream s;
    s << p.unsafeGetTensorImpl();
    return s.str();
  } else {
    return static_cast<Key>(p.unsafeGetTensorImpl());
  }
}


// One element's AdamW update, as LibTorch's AdamW::step computes it with tensor ops:
//   p *= 1 - lr wd;  m = m b1 + (1 - b1) g;  v = v b2 + (1 - b2) g g;
//   p += -(lr / bc1) m / (sqrt(v) / sqrt(bc2) + eps)
// The gradient enters scaled by the clipping coefficient (1 without clipping: exact).
struct Coefficients {
  float decay, beta1, one_minus_beta1, beta2, one_minus_beta2, sqrt_bc2, eps, neg_step, grad_scale;
  bool decays;
};

LRB_INLINE void update_loop(float* __restrict p, const float* __restrict g, float* __restrict m, float* __restrict v,
                            std::int64_t n, const Coefficients& c) {
  for (std::int64_t i = 0; i < n; ++i) {
    float pi = p[i];
    if (c.decays) pi *= c.decay;
    const float gi = g[i] * c.grad_scale;
    const float mi = m[i] * c.beta1 + c.one_minus_beta1 * gi;
    const float vi = v[i] * c.beta2 + c.one_minus_beta2 * gi * gi;
    m[i] = mi;
    v[i] = vi;
    p[i] = pi + c.neg_step * (mi / (std::sqrt(vi) / c.sqrt_bc2 + c.eps));
  }
}

// The loop is bound by its square root and two divisions: compiled for the baseline x86-64
// it does them 4 floats at a time (SSE), for AVX2 8. Each element gets the same IEEE
// operations in the same order either way (no FMA: that would round differently), so the
// same bits. The copy simd_level() names is taken.
LRB_SIMD_EXACT_DISPATCH(update, update_loop)

// A dense tensor of a float type on `device`: what the multi-tensor update takes.
bool dense_float(const at::Tensor& t, const at::Device& device) {
  return t.defined() && t.device() == device && t.layout() == at::kStrided && at::isFloatingType(t.scalar_type()) &&
         !t.is_neg() && !t.is_conj();
}
// ... and contiguous float32 on the CPU: what the fused loop takes.
bool dense_float_cpu(const at::Tensor& t) {
  return dense_float(t, at::kCPU) && t.scalar_type() == at::kFloat && t.is_contiguous();
}

}  // namespace

FusedAdamW::UpdatePath FusedAdamW::update_path() const {
  bool fused = true;
  std::optional<at::Device> device;
  for (const auto& group : param_groups()) {
    if (static_cast<const AdamWOptions&>(group.options()).amsgrad()) return UpdatePath::libtorch;
    for (const auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      if (!device) device = p.device();
      if (!dense_float(p, *device) || !dense_float(p.grad(), *device) || p.scalar_type() != p.grad().scalar_type())
        return UpdatePath::libtorch;
      fused = fused && dense_float_cpu(p) && dense_float_cpu(p.grad());
    }
  }
  return fused ? UpdatePath::fused_loop : UpdatePath::multi_tensor;
}

torch::Tensor FusedAdamW::step(LossClosure closure) {
  const UpdatePath path = update_path();
  if (path == UpdatePath::libtorch) return torch::optim::AdamW::step(std::move(closure));
  at::NoGradGuard no_grad;
  at::Tensor loss;
  if (closure != nullptr) {
    at::AutoGradMode enable_grad(true);
    loss = closure();
  }
  if (path == UpdatePath::fused_loop) update_all(1.0f);
  else update_multi_tensor();
  return loss;
}

double FusedAdamW::clip_and_step(const std::vector<at::Tensor>& parameters, double max_norm) {
  std::vector<at::Tensor> with_grad;
  for (const auto& p : parameters)
    if (p.grad().defined()) with_grad.push_back(p);
  if (update_path() != UpdatePath::fused_loop || with_grad.empty()) {
    const double norm = torch::nn::utils::clip_grad_norm_(with_grad, max_norm);
    step();
    return norm;
  }
  at::NoGradGuard no_grad;
  // clip_grad_norm_'s own arithmetic (LibTorch 1.13 and 2.x), so the coefficient is its bits.
  std::vector<at::Tensor> norms;
  for (const auto& p : with_grad) norms.push_back(p.grad().norm(2.0));
  const at::Tensor total = norms.size() == 1 ? norms[0] : at::stack(norms).norm(2.0);
  const at::Tensor coefficient = at::clamp_max(max_norm / (total + 1e-6), 1.0);
  update_all(coefficient.item<float>());
  return total.item<double>();
}

AdamWParamState& FusedAdamW::state_of(const at::Tensor& p) {
  using Key = typename std::decay_t<decltype(state_)>::key_type;
  const Key key = state_key<Key>(p);
  auto found = state_.find(key);
  if (found == state_.end()) {  // as AdamW creates it
    auto fresh = std::make_unique<AdamWParamState>();
    fresh->step(0);
    fresh->exp_avg(at::zeros_like(p, at::MemoryFormat::Preserve));
    fresh->exp_avg_sq(at::zeros_like(p, at::MemoryFormat::Preserve));
    found = state_.emplace(key, std::move(fresh)).first;
  }
  return static_cast<AdamWParamState&>(*found->second);
}

void FusedAdamW::update_multi_tensor() {
  for (auto& group : param_groups()) {
    const auto& o = static_cast<const AdamWOptions&>(group.options());
    const double lr = o.lr(), beta1 = std::get<0>(o.betas()), beta2 = std::get<1>(o.betas());
    // Parameters at one step count share their bias corrections: one list each (all of a
    // group but after a load of a partial state).
    std::map<std::int64_t, std::array<std::vector<at::Tensor>, 4>> by_step;
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      AdamWParamState& state = state_of(p);
      for (at::Tensor* t : {&state.exp_avg(), &state.exp_avg_sq()})
        if (t->device() != p.device() || t->scalar_type() != p.scalar_type()) *t = t->to(p.options());
      state.step(state.step() + 1);
      auto& lists = by_step[state.step()];
      lists[0].push_back(p);
      lists[1].push_back(p.grad());
      lists[2].push_back(state.exp_avg());
      lists[3].push_back(state.exp_avg_sq());
    }
    for (auto& [step, lists] : by_step) {
      auto& [params, grads, m, v] = lists;
      // LibTorch's AdamW::step, op for op, over whole lists (on CUDA a launch covers many tensors).
      at::_foreach_mul_(params, 1 - lr * o.weight_decay());
      at::_foreach_mul_(m, beta1);
      at::_foreach_add_(m, grads, 1 - beta1);
      at::_foreach_mul_(v, beta2);
      at::_foreach_addcmul_(v, grads, grads, 1 - beta2);
      const double bc1 = 1 - std::pow(beta1, static_cast<double>(step));
      const double bc2 = 1 - std::pow(beta2, static_cast<double>(step));
      std::vector<at::Tensor> denom = at::_foreach_sqrt(v);
      at::_foreach_div_(denom, std::sqrt(bc2));
      at::_foreach_add_(denom, o.eps());
      at::_foreach_addcdiv_(params, m, denom, -(lr / bc1));
    }
  }
}

void FusedAdamW::update_all(float grad_scale) {
  for (auto& group : param_groups()) {
    const auto& o = static_cast<const AdamWOptions&>(group.options());
    const double lr = o.lr(), wd = o.weight_decay(), beta1 = std::get<0>(o.betas()), beta2 = std::get<1>(o.betas());
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      AdamWParamState& state = state_of(p);
      at::Tensor& m = state.exp_avg();
      at::Tensor& v = state.exp_avg_sq();
      if (!dense_float_cpu(m) || !dense_float_cpu(v)) {  // a loaded state of another layout
        m = m.to(p.options()).contiguous();
        v = v.to(p.options()).contiguous();
      }
      state.step(state.step() + 1);
      const double bc1 = 1 - std::pow(beta1, static_cast<double>(state.step()));
      const double bc2 = 1 - std::pow(beta2, static_cast<double>(state.step()));
      const Coefficients c{static_cast<float>(1 - lr * wd), static_cast<float>(beta1), static_cast<float>(1 - beta1),
                           static_cast<float>(beta2),       static_cast<float>(1 - beta2), static_cast<float>(std::sqrt(bc2)),
                           static_cast<float>(o.eps()),     static_cast<float>(-(lr / bc1)), grad_scale,
                           wd != 0};
      update(p.data_ptr<float>(), p.grad().data_ptr<float>(), m.data_ptr<float>(), v.data_ptr<float>(), p.numel(),
             c);
      // Written through pointers: bump the versions in-place tensor ops would have bumped.
      for (const at::Tensor* t : {&p, &m, &v}) t->unsafeGetTensorImpl()->bump_version();
    }
  }
}

void clip_and_step(torch::optim::Optimizer& optimizer, const std::vector<at::Tensor>& parameters, double max_norm) {
  if (max_norm <= 0) {
    optimizer.step();
  } else if (auto* fused = dynamic_cast<FusedAdamW*>(&optimizer)) {
    fused->clip_and_step(parameters, max_norm);
  } else {
    torch::nn::utils::clip_grad_norm_(parameters, max_norm);
    optimizer.step();
  }
}

}  // namespace lrb
