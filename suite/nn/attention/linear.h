#pragma once
// Kernel ("linear") attention: out_i = psi(q_i)^T (sum_j psi(k_j) v_j^T) / norm_i with a
// non-negative feature map psi. O(N*d*dv) time and O(N*d + d*dv) memory; no N x N tensor,
// no pairwise score is ever computed.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>

namespace lrb {

enum class FeatureMap { EluPlusOne, Relu, Softplus };
enum class LinearNormalization {
  Row,  // Katharopoulos et al.: norm_i = psi(q_i)^T sum_j psi(k_j) + eps
  Tau,  // MAELRE: norm_i = tau (a plain output scaling, so tau can be swept)
};

struct LinearAttentionOptions {
  FeatureMap feature_map = FeatureMap::EluPlusOne;
  LinearNormalization normalization = LinearNormalization::Row;
  // Tau normalisation: 0 means sqrt(N), N = real keys of each batch element (MAELRE's
  // tau = sqrt(N_b); counting real keys keeps padding from changing the result).
  double tau = 0;
  double eps = 1e-6;  // Row normalisation (Katharopoulos et al.)
};

FeatureMap parse_feature_map(const std::string& name);  // "elu+1" | "relu" | "softplus"; UserError else
LinearNormalization parse_linear_normalization(const std::string& name);  // "row" | "tau"
const char* feature_map_name(FeatureMap f);

// q [B, H, Nq, d], k, v [B, H, Nk, d]; mask [B, Nk] bool, true = real token (masked keys
// contribute nothing). Differentiable through LibTorch ops.
at::Tensor linear_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                            const LinearAttentionOptions& options = {}, const at::Tensor& mask = {});

// No query-key score is computed: 0 (the cost is B*H*(Nq+Nk)*d*dv multiply-adds).
inline std::int64_t linear_score_elements() { return 0; }

}  // namespace lrb
