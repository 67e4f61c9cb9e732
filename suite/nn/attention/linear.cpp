#include "suite/nn/attention/linear.h"

#include <ATen/ATen.h>

#include <cmath>

#include "suite/core/errors.h"
#include "suite/nn/attention/common.h"
#include "suite/nn/attention/kernel_registry.h"
#include "suite/nn/batched_matmul.h"
#include "suite/nn/cpu/linear_fused.h"

namespace lrb {
namespace {

at::Tensor feature(const at::Tensor& x, FeatureMap f) {
  switch (f) {
    case FeatureMap::EluPlusOne: return linear_fused_applies(x) ? elu_plus_one(x) : at::elu(x) + 1;
    case FeatureMap::Relu: return at::relu(x);
    case FeatureMap::Softplus: return at::softplus(x);
  }
  return x;
}

}  // namespace

FeatureMap parse_feature_map(const std::string& name) {
  if (name == "elu+1" || name == "elu") return FeatureMap::EluPlusOne;
  if (name == "relu") return FeatureMap::Relu;
  if (name == "softplus") return FeatureMap::Softplus;
  throw UserError("linear attention: unknown feature map '" + name + "'; use elu+1, relu or softplus");
}

LinearNormalization parse_linear_normalization(const std::string& name) {
  if (name == "row") return LinearNormalization::Row;
  if (name == "output") return LinearNormalization::Output;
  if (name == "row-input") return LinearNormalization::RowInput;
  throw UserError("linear attention: unknown normalization '" + name + "'; use row, output or row-input");
}

const char* feature_map_name(FeatureMap f) {
  switch (f) {
    case FeatureMap::EluPlusOne: return "elu+1";
    case FeatureMap::Relu: return "relu";
    case FeatureMap::Softplus: return "softplus";
  }
  return "?";
}

const char* linear_normalization_name(LinearNormalization n) {
  switch (n) {
    case LinearNormalization::Row: return "row";
    case LinearNormalization::Output: return "output";
    case LinearNormalization::RowInput: return "row-input";
  }
  return "?";
}

bool uses_tau(LinearNormalization n) { return n != LinearNormalization::Row; }
bool has_row_normaliser(LinearNormalization n) { return n != LinearNormalization::Output; }

at::Tensor linear_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                            const LinearAttentionOptions& options, const at::Tensor& mask) {
  check_qkv(q, k, v, "linear");
  if (options.tau < 0) throw UserError("linear attention: tau must be > 0 (or 0 for sqrt(N))");
  if (options.tau > 0 && !uses_tau(options.normalization))
    throw UserError("linear attention: normalization 'row' has no tau; leave tau at 0, or use row-input or output");
  const std::int64_t B = q.size(0), Nk = k.size(2);
  const at::Tensor keep = check_key_mask(mask, B, Nk, q, "linear");
  // tau per batch element, [B, 1, 1, 1] (or a plain number when fixed).
  at::Tensor tau_of_batch;
  if (uses_tau(options.normalization) && options.tau == 0) {
    const at::Tensor real = keep.defined() ? keep.sum(1).to(q.scalar_type())
                                           : at::full({B}, static_cast<double>(Nk), q.options());
    tau_of_batch = real.clamp_min(1).sqrt().view({B, 1, 1, 1});
  }
  at::Tensor q_in = q, k_in = k;
  if (options.normalization == LinearNormalization::RowInput) {
    // 1/sqrt(tau) on each of q and k: 1/tau on their dot product.
    if (tau_of_batch.defined()) {
      const at::Tensor s = tau_of_batch.rsqrt();
      q_in = q * s;
      k_in = k * s;
    } else {
      const double s = 1.0 / std::sqrt(options.tau);
      q_in = q * s;
      k_in = k * s;
    }
  }
  const at::Tensor fq = feature(q_in, options.feature_map);
  at::Tensor fk = feature(k_in, options.feature_map);
  if (keep.defined()) fk = fk * keep.view({B, 1, Nk, 1}).to(fk.scalar_type());
  const at::Tensor kv = batched_matmul(fk.transpose(-2, -1), v);  // [B, H, d, dv]: the d x d state
  if (has_row_normaliser(options.normalization)) {
    const at::Tensor z = fk.sum(2).unsqueeze(-1);  // [B, H, d, 1]: Z' without an N x N matrix
    if (linear_fused_applies(fq)) {
      // Z' as one more column of the state: one product gives each query's numerator and Z'_i.
      const at::Tensor numden = batched_matmul(fq, at::cat({kv, z}, -1));
      return divide_by_last_column(numden, options.eps);
    }
    return batched_matmul(fq, kv) / (batched_matmul(fq, z) + options.eps);
  }
  const at::Tensor num = batched_matmul(fq, kv);
  return tau_of_batch.defined() ? num / tau_of_batch : num / options.tau;
}

double linear_attention_flops(double nq, double nk, double dim, double heads, LinearNormalization n) {
  const double head_dim = dim / heads;
  double f = 2 * (nk + nq) * dim * head_dim;  // psi(K)^T V, then psi(Q) S
  if (has_row_normaliser(n)) f += nk * dim + 2 * nq * dim + nq * dim;  // sum_j psi(k_j), psi(Q) z, division
  if (n == LinearNormalization::Output) f += nq * dim;                  // / tau
  if (n == LinearNormalization::RowInput) f += (nq + nk) * dim;         // q / sqrt(tau), k / sqrt(tau)
  return f;
}

namespace {

// `lrbench attend --kernel linear`: its options and how it runs on q, k, v.
AttentionKernel linear_kernel() {
  using namespace kernel_spec;
  return {"linear", "kernel (linear) attention: psi(q) (psi(K)^T V) / norm; no N x N tensor",
          {{string_opt("feature_map", "elu+1", {"elu+1", "relu", "softplus"}, "non-negative feature map psi"),
            string_opt("normalization", "row", {"row", "output", "row-input"},
                       "row: Katharopoulos et al.'s row normaliser Z' (+eps), no tau; output: divide by "
                       "tau, no Z' (not an average of v); row-input: Z' with psi(q/sqrt(tau)), "
                       "psi(k/sqrt(tau)) (tau as a temperature)"),
            float_opt("tau", 0.0, "tau of output and row-input; 0 means sqrt(real keys)"),
            float_opt("eps", 1e-6, "epsilon added to the row normaliser Z'")}},
          {"mask"},
          [](const json& o, const AttentionTensors& in) {
            reject(in, "linear", true, false, false);
            LinearAttentionOptions lo;
            lo.feature_map = parse_feature_map(o.at("feature_map").get<std::string>());
            lo.normalization = parse_linear_normalization(o.at("normalization").get<std::string>());
            lo.tau = o.at("tau").get<double>();
            lo.eps = o.at("eps").get<double>();
            AttentionRun r;
            r.out = linear_attention(in.q, in.k, in.v, lo, in.mask);
            r.score_elements = linear_score_elements();
            return r;
          }};
}

}  // namespace

LRB_REGISTER_ATTENTION_KERNEL(20, linear_kernel());

}  // namespace lrb
