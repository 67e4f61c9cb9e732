#include "suite/nn/attention/retention.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <cmath>

#include "suite/core/errors.h"
#include "suite/nn/attention/common.h"
#include "suite/nn/attention/kernel_registry.h"
#include "suite/nn/batched_matmul.h"
#include "suite/nn/cpu/retention_chunks.h"

namespace lrb {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// o[:, n] = a @ b for one token row (bmm_out wants an lvalue).
void bmm_row(const at::Tensor& o, std::int64_t n, const at::Tensor& a, const at::Tensor& b) {
  at::Tensor row = o.narrow(1, n, 1);
  at::bmm_out(row, a, b);
}

struct Prepared {
  at::Tensor k;          // masked keys
  at::Tensor log_gamma;  // float64 [H] on the device
};

Prepared prepare(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& mask,
                 const at::Tensor& gammas, const char* form) {
  const std::string name = std::string("retention (") + form + ")";
  check_qkv(q, k, v, name);
  if (q.size(2) != k.size(2)) throw UserError(name + ": retention is causal, so q and k need the same tokens");
  const std::int64_t B = q.size(0), H = q.size(1), N = q.size(2);
  at::Tensor g = gammas.defined() ? gammas.detach().to(at::kDouble).cpu() : retention_decays(H);
  if (g.dim() != 1 || g.size(0) != H) throw UserError(name + ": gammas must be [H]");
  if (g.le(0).any().item<bool>() || g.gt(1).any().item<bool>())
    throw UserError(name + ": decays must lie in (0, 1]");
  Prepared p;
  const at::Tensor keep = check_key_mask(mask, B, N, q, name);
  p.k = keep.defined() ? k * keep.view({B, 1, N, 1}).to(k.scalar_type()) : k;
  p.log_gamma = g.log().to(q.device());
  return p;
}

// gamma_h^(exponent) for an integer exponent tensor, computed in `like`'s dtype (an N x N
// decay built in float64 and converted would cost three float32 N x N buffers): [H, *exponent].
at::Tensor decay_powers(const at::Tensor& log_gamma, const at::Tensor& exponent, const at::Tensor& like) {
  std::vector<std::int64_t> shape{log_gamma.size(0)};
  for (std::int64_t i = 0; i < exponent.dim(); ++i) shape.push_back(1);
  return (log_gamma.to(like.scalar_type()).view(shape) * exponent.to(like.scalar_type()).unsqueeze(0)).exp_();
}

struct RecurrentRetention : public torch::autograd::Function<RecurrentRetention> {
  // q, k, v as [B*H, N, d] contiguous; gamma [B*H, 1, 1] in their dtype.
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                            const at::Tensor& gamma) {
    const std::int64_t BH = q.size(0), N = q.size(1), d = q.size(2), dv = v.size(2);
    at::Tensor state = at::zeros({BH, d, dv}, q.options());
    at::Tensor out = at::empty({BH, N, dv}, q.options());
    for (std::int64_t n = 0; n < N; ++n) {
      state.mul_(gamma).baddbmm_(k.narrow(1, n, 1).transpose(1, 2), v.narrow(1, n, 1));
      bmm_row(out, n, q.narrow(1, n, 1), state);
    }
    ctx->save_for_backward({q, k, v, gamma});
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &q = saved[0], &k = saved[1], &v = saved[2], &gamma = saved[3];
    const at::Tensor dout = grads[0].contiguous();
    const std::int64_t BH = q.size(0), N = q.size(1), d = q.size(2), dv = v.size(2);
    at::Tensor dq = at::empty_like(q), dk = at::empty_like(k), dvv = at::empty_like(v);
    // dq_n = dO_n S_n^T: the forward recurrence again.
    at::Tensor state = at::zeros({BH, d, dv}, q.options());
    for (std::int64_t n = 0; n < N; ++n) {
      state.mul_(gamma).baddbmm_(k.narrow(1, n, 1).transpose(1, 2), v.narrow(1, n, 1));
      bmm_row(dq, n, dout.narrow(1, n, 1), state.transpose(1, 2));
    }
    // G_n = dL/dS_n = q_n^T dO_n + gamma G_(n+1); dk_n = v_n G_n^T, dv_n = k_n G_n.
    at::Tensor g = at::zeros({BH, d, dv}, q.options());
    for (std::int64_t n = N - 1; n >= 0; --n) {
      g.mul_(gamma).baddbmm_(q.narrow(1, n, 1).transpose(1, 2), dout.narrow(1, n, 1));
      bmm_row(dk, n, v.narrow(1, n, 1), g.transpose(1, 2));
      bmm_row(dvv, n, k.narrow(1, n, 1), g);
    }
    return {dq, dk, dvv, at::Tensor()};
  }
};

}  // namespace

RetentionForm parse_retention_form(const std::string& name) {
  if (name == "parallel") return RetentionForm::Parallel;
  if (name == "recurrent") return RetentionForm::Recurrent;
  if (name == "chunkwise") return RetentionForm::Chunkwise;
  throw UserError("retention: unknown form '" + name + "'; use parallel, recurrent or chunkwise");
}

at::Tensor retention_decays(std::int64_t heads) {
  at::Tensor h = at::arange(heads, at::kDouble);
  return 1.0 - at::pow(2.0, -5.0 - h);
}

at::Tensor retention_parallel(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& mask,
                              const at::Tensor& gammas) {
  const Prepared p = prepare(q, k, v, mask, gammas, "parallel");
  const std::int64_t N = q.size(2);
  const at::Tensor pos = at::arange(N, q.options().dtype(at::kLong));
  const at::Tensor diff = pos.view({N, 1}) - pos.view({1, N});
  // gamma^(n-m) below the diagonal; clamp keeps exp finite above it before the zeroing.
  const at::Tensor decay = decay_powers(p.log_gamma, diff.clamp_min(0), q).masked_fill_(diff.lt(0), 0);
  return batched_matmul(batched_matmul(q, p.k.transpose(-2, -1)) * decay, v);
}

at::Tensor retention_recurrent(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& mask,
                               const at::Tensor& gammas) {
  const Prepared p = prepare(q, k, v, mask, gammas, "recurrent");
  const std::int64_t B = q.size(0), H = q.size(1), N = q.size(2), d = q.size(3), dv = v.size(3);
  const at::Tensor gamma =
      p.log_gamma.exp().to(q.scalar_type()).view({1, H, 1, 1}).expand({B, H, 1, 1}).reshape({B * H, 1, 1});
  const at::Tensor out = RecurrentRetention::apply(q.reshape({B * H, N, d}).contiguous(),
                                                   p.k.reshape({B * H, N, d}).contiguous(),
                                                   v.reshape({B * H, N, dv}).contiguous(), gamma);
  return out.view({B, H, N, dv});
}

at::Tensor retention_chunkwise(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& mask,
                               std::int64_t chunk, const at::Tensor& gammas) {
  const Prepared p = prepare(q, k, v, mask, gammas, "chunkwise");
  if (chunk < 1) throw UserError("retention (chunkwise): chunk must be >= 1");
  const std::int64_t B = q.size(0), H = q.size(1), N = q.size(2), d = q.size(3), dv = v.size(3);
  const std::int64_t C = std::min(chunk, N), nc = ceil_div(N, C), pad = nc * C - N;
  // Zero padding: padded keys add nothing, padded queries are dropped.
  const at::Tensor q5 = pad_tokens(q, 0, pad).view({B, H, nc, C, d});
  const at::Tensor k5 = pad_tokens(p.k, 0, pad).view({B, H, nc, C, d});
  const at::Tensor v5 = pad_tokens(v, 0, pad).view({B, H, nc, C, dv});
  const auto lopts = q.options().dtype(at::kLong);
  const at::Tensor i = at::arange(C, lopts);
  const at::Tensor diff = i.view({C, 1}) - i.view({1, C});
  const at::Tensor inner_decay = decay_powers(p.log_gamma, diff.clamp_min(0), q).masked_fill(diff.lt(0), 0);
  // Chunk c's contribution to later states: sum_j gamma^(C-1-j) k_j^T v_j.
  const at::Tensor k_decay = decay_powers(p.log_gamma, (C - 1) - i, q);
  const at::Tensor chunk_decay = decay_powers(p.log_gamma, at::full({1}, C, lopts), q).view({H});
  const at::Tensor q_decay = decay_powers(p.log_gamma, i + 1, q);
  return retention_chunks(q5, k5, v5, inner_decay, k_decay, q_decay, chunk_decay)
      .view({B, H, nc * C, dv})
      .narrow(2, 0, N);
}

at::Tensor retention(RetentionForm form, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                     const at::Tensor& mask, std::int64_t chunk, const at::Tensor& gammas) {
  switch (form) {
    case RetentionForm::Parallel: return retention_parallel(q, k, v, mask, gammas);
    case RetentionForm::Recurrent: return retention_recurrent(q, k, v, mask, gammas);
    case RetentionForm::Chunkwise: return retention_chunkwise(q, k, v, mask, chunk, gammas);
  }
  return {};
}

std::int64_t retention_score_elements(RetentionForm form, std::int64_t batch, std::int64_t heads, std::int64_t tokens,
                                      std::int64_t chunk) {
  switch (form) {
    case RetentionForm::Parallel: return batch * heads * tokens * tokens;
    case RetentionForm::Recurrent: return 0;
    case RetentionForm::Chunkwise: {
      const std::int64_t c = std::max<std::int64_t>(1, std::min(chunk, tokens));
      return batch * heads * ceil_div(tokens, c) * c * c;
    }
  }
  return 0;
}

namespace {

// `lrbench attend --kernel retention`: its options and how it runs on q, k, v.
AttentionKernel retention_kernel() {
  using namespace kernel_spec;
  return {"retention", "RetNet retention (QK^T . D)V, decay gamma_h = 1 - 2^(-5-h); three equivalent forms",
          {{string_opt("form", "chunkwise", {"parallel", "recurrent", "chunkwise"},
                       "parallel: O(N^2); recurrent: token by token; chunkwise: both mixed"),
            int_opt("chunk", 64, "chunk length of the chunkwise form", 1)}},
          {"mask"},
          [](const json& o, const AttentionTensors& in) {
            reject(in, "retention", true, false, false);
            const auto form = parse_retention_form(o.at("form").get<std::string>());
            const std::int64_t chunk = o.at("chunk").get<std::int64_t>();
            AttentionRun r;
            r.out = retention(form, in.q, in.k, in.v, in.mask, chunk);
            r.score_elements =
                retention_score_elements(form, in.q.size(0), in.q.size(1), in.q.size(2), chunk);
            return r;
          }};
}

}  // namespace

LRB_REGISTER_ATTENTION_KERNEL(70, retention_kernel());

}  // namespace lrb
