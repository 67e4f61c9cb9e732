#pragma once
// Kernel ("linear") attention with a non-negative feature map psi: out_i = psi(q_i)^T
// (sum_j psi(k_j) v_j^T), divided by a row normaliser or by tau. O(N*d*dv) time and
// O(N*d + d*dv) memory; no N x N tensor, no pairwise score is ever computed.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>

namespace lrb {

enum class FeatureMap { EluPlusOne, Relu, Softplus };

// How the sum over keys is normalised, and where a scaling tau acts. The readings of
// MAELRE's Eq. 2 (a row normaliser Z' and tau = sqrt(N_b)) that this kernel offers:
enum class LinearNormalization {
  // Katharopoulos et al.: divide by Z'_i = psi(q_i)^T sum_j psi(k_j) + eps. No tau. Each
  // output row is a convex combination of the values (the weights are >= 0 and sum to 1).
  Row,
  // Divide by tau, no Z' (a plain output scaling). Not an average of the values: on random
  // normal inputs its RMS is tens of times the values' RMS at any N.
  Output,
  // Z' with tau on psi's inputs: psi(q/sqrt(tau)) and psi(k/sqrt(tau)). With Z', a scalar
  // on the output cancels, so tau can only matter inside psi; splitting it as 1/sqrt(tau) on
  // each of q and k keeps the similarity symmetric and puts 1/tau on q.k, as softmax's
  // 1/sqrt(d) becomes d^-1/4 on each of q and k in kernelised softmax (Performer). A large
  // tau flattens the weights towards the mean of the values, like a softmax temperature.
  // psi = relu is positively homogeneous, so for it the scaling cancels too (= Row).
  RowInput,
};

struct LinearAttentionOptions {
  FeatureMap feature_map = FeatureMap::EluPlusOne;
  LinearNormalization normalization = LinearNormalization::Row;
  // Output and RowInput: 0 means sqrt(N), N = real keys of each batch element (MAELRE's
  // tau = sqrt(N_b); counting real keys keeps padding from changing the result); > 0 fixes it.
  double tau = 0;
  double eps = 1e-6;  // Row and RowInput: added to Z' (Katharopoulos et al.)
};

FeatureMap parse_feature_map(const std::string& name);  // "elu+1" | "relu" | "softplus"; UserError else
// "row" | "output" | "row-input"; UserError naming them else.
LinearNormalization parse_linear_normalization(const std::string& name);
const char* feature_map_name(FeatureMap f);
const char* linear_normalization_name(LinearNormalization n);
// Whether a reading uses tau (Output, RowInput) and whether it has the row normaliser Z'.
bool uses_tau(LinearNormalization n);
bool has_row_normaliser(LinearNormalization n);

// q [B, H, Nq, d], k, v [B, H, Nk, d]; mask [B, Nk] bool, true = real token (masked keys
// contribute nothing). Differentiable through LibTorch ops.
at::Tensor linear_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                            const LinearAttentionOptions& options = {}, const at::Tensor& mask = {});

// Forward FLOPs of the kernel over all heads (multiply-add = 2), dim = heads * head dim for
// q, k and v: the two products psi(K)^T V and psi(Q) S (2 * (Nk + Nq) * dim * head_dim); with
// Z' its key sum (Nk * dim), psi(Q)^T z (2 * Nq * dim) and the division (Nq * dim); the tau
// scaling of the output (Nq * dim) or of psi's inputs ((Nq + Nk) * dim). The feature map
// itself counts none (as softmax's exp counts none in the softmax models).
double linear_attention_flops(double q_tokens, double k_tokens, double dim, double heads, LinearNormalization n);

// No query-key score is computed: 0 (the cost is B*H*(Nq+Nk)*d*dv multiply-adds).
inline std::int64_t linear_score_elements() { return 0; }

}  // namespace lrb
