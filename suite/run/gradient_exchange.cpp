#include "suite/run/gradient_exchange.h"

#include <ATen/ATen.h>
#include <fmt/core.h>

#include <cmath>

#include "suite/core/errors.h"
#include "suite/core/sha256.h"
#include "suite/mpi/run_group.h"
#include "suite/runtime/cuda_device.h"

namespace lrb {

namespace {

at::ScalarType common_type(const std::vector<at::Tensor>& parameters) {
  const at::ScalarType t = parameters.empty() ? at::kFloat : parameters.front().scalar_type();
  for (const auto& p : parameters)
    if (p.scalar_type() != t)
      throw std::runtime_error(fmt::format("data parallelism needs one floating type for every parameter ({} and {})",
                                           c10::toString(t), c10::toString(p.scalar_type())));
  if (t != at::kFloat && t != at::kDouble)
    throw std::runtime_error(fmt::format("data parallelism sums float32 or float64 gradients, not {}", c10::toString(t)));
  return t;
}

// In place, over the group: through host memory (MPI), or on the device where the exchange
// is NCCL, queued on the device's current stream behind the copies that filled `flat`.
void sum_over(RunGroup& group, at::Tensor& flat) {
  if (flat.is_cuda()) {
    const auto element = flat.scalar_type() == at::kDouble ? RunGroup::Element::Float64 : RunGroup::Element::Float32;
    group.sum_on_device(flat.data_ptr(), static_cast<std::size_t>(flat.numel()), element, current_cuda_stream(flat.device().index()));
  } else if (flat.scalar_type() == at::kDouble) {
    group.sum(flat.data_ptr<double>(), static_cast<std::size_t>(flat.numel()));
  } else {
    group.sum(flat.data_ptr<float>(), static_cast<std::size_t>(flat.numel()));
  }
}

double value_at(const at::Tensor& host, std::int64_t i) {
  return host.scalar_type() == at::kDouble ? host.data_ptr<double>()[i] : static_cast<double>(host.data_ptr<float>()[i]);
}

void set_value(at::Tensor& host, std::int64_t i, double v) {
  if (host.scalar_type() == at::kDouble) host.data_ptr<double>()[i] = v;
  else host.data_ptr<float>()[i] = static_cast<float>(v);
}

}  // namespace

ExchangeResult exchange_gradients(RunGroup& group, const std::vector<at::Tensor>& parameters, double loss_share,
                                  const std::string& error) {
  const at::ScalarType type = common_type(parameters);
  std::int64_t values = 0;
  for (const auto& p : parameters) values += p.numel();
  const auto n_params = static_cast<std::int64_t>(parameters.size());
  // [gradients | one "has a gradient" flag per parameter | loss share | failed members]
  // The buffer lives where the exchange sums: on the host for MPI (a CUDA run copies each
  // way), on the parameters' device for NCCL (only the small tail after the gradients
  // crosses to the host, to be read). It is made anew each step on purpose: one kept
  // between steps would sit beside the next step's activations and raise the run's
  // recorded peak memory by the gradients' size.
  const bool on_device = group.exchange() == "nccl" && !parameters.empty() && parameters.front().is_cuda();
  const at::Device where = on_device ? parameters.front().device() : at::Device(at::kCPU);
  at::Tensor flat = at::zeros({values + n_params + 2}, at::TensorOptions().dtype(type).device(where));
  at::Tensor tail = at::zeros({n_params + 2}, at::TensorOptions().dtype(type));
  const bool ok = error.empty();
  if (ok) {
    std::int64_t at_value = 0;
    for (std::int64_t i = 0; i < n_params; ++i) {
      const at::Tensor& p = parameters[static_cast<std::size_t>(i)];
      if (p.grad().defined()) {
        flat.narrow(0, at_value, p.numel()).copy_(p.grad().reshape({-1}));
        set_value(tail, i, 1);
      }
      at_value += p.numel();
    }
  }
  set_value(tail, n_params, ok ? loss_share : 0.0);
  set_value(tail, n_params + 1, ok ? 0.0 : 1.0);
  flat.narrow(0, values, n_params + 2).copy_(tail);
  sum_over(group, flat);
  tail = flat.narrow(0, values, n_params + 2).to(at::kCPU, /*non_blocking=*/false, /*copy=*/true);

  ExchangeResult out;
  const double failed_members = value_at(tail, n_params + 1);
  if (failed_members > 0) {
    out.failed = true;
    const auto texts = group.gather_text(error);
    for (std::size_t m = 0; m < texts.size(); ++m)
      if (!texts[m].empty()) {
        out.error = fmt::format("member {} of the run's {}-rank group failed: {}", m, group.size(), texts[m]);
        break;
      }
    return out;
  }
  out.loss = value_at(tail, n_params);
  std::int64_t at_value = 0;
  for (std::int64_t i = 0; i < n_params; ++i) {
    const at::Tensor& p = parameters[static_cast<std::size_t>(i)];
    if (value_at(tail, i) > 0) {
      const at::Tensor summed = flat.narrow(0, at_value, p.numel()).view(p.sizes());
      if (p.grad().defined()) p.mutable_grad().copy_(summed);
      else p.mutable_grad() = summed.to(p.device(), /*non_blocking=*/false, /*copy=*/true);
    }
    at_value += p.numel();
  }
  return out;
}

std::string replicas_differ(RunGroup& group, const std::vector<at::Tensor>& parameters) {
  Sha256 digest;
  for (const auto& p : parameters) {
    const at::Tensor host = p.detach().to(at::kCPU).contiguous();
    digest.update(std::string_view(static_cast<const char*>(host.data_ptr()), host.nbytes()));
  }
  const std::string mine = digest.hex();
  const auto all = group.gather_text(mine);
  for (std::size_t m = 1; m < all.size(); ++m)
    if (all[m] != all[0])
      return fmt::format("the replicas of the model diverged: member {}'s weights differ from member 0's (digest {} "
                         "against {}); the group's gradient sums did not agree",
                         m, all[m].substr(0, 12), all[0].substr(0, 12));
  return "";
}

}  // namespace lrb
