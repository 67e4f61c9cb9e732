#include <gtest/gtest.h>

#include <cmath>

#include "attention_test_util.h"
#include "suite/core/errors.h"
#include "suite/nn/attention/linear.h"

namespace lrb {
namespace {

using namespace lrb::test;

at::Tensor psi(const at::Tensor& x, FeatureMap f) {
  if (f == FeatureMap::EluPlusOne) return at::where(x.gt(0), x + 1, x.exp());
  if (f == FeatureMap::Relu) return x.clamp_min(0);
  return (1 + x.exp()).log();
}

// The N x N form: A_ij = psi(q_i).psi(k_j) for real keys; out = A v / (row sum + eps) or / tau.
at::Tensor reference(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& mask,
                     const LinearAttentionOptions& o) {
  at::Tensor a = at::matmul(psi(q, o.feature_map), psi(k, o.feature_map).transpose(-2, -1));
  if (mask.defined()) a = a * key_pattern(mask).to(a.scalar_type());
  if (o.normalization == LinearNormalization::Row) return at::matmul(a, v) / (a.sum(-1, true) + o.eps);
  if (o.tau > 0) return at::matmul(a, v) / o.tau;
  const at::Tensor n = mask.defined() ? mask.sum(1).to(at::kDouble) : at::full({q.size(0)}, double(k.size(2)), at::kDouble);
  return at::matmul(a, v) / n.sqrt().view({-1, 1, 1, 1}).to(a.scalar_type());
}

TEST(AttentionLinear, EveryFeatureMapAndNormalisationMatchesTheQuadraticForm) {
  at::manual_seed(30);
  for (const auto f : {FeatureMap::EluPlusOne, FeatureMap::Relu, FeatureMap::Softplus})
    for (const auto n : {LinearNormalization::Row, LinearNormalization::Tau})
      for (const double tau : {0.0, 3.5}) {
        if (n == LinearNormalization::Row && tau > 0) continue;
        SCOPED_TRACE(std::string(feature_map_name(f)) + (n == LinearNormalization::Row ? " row" : " tau"));
        LinearAttentionOptions o;
        o.feature_map = f;
        o.normalization = n;
        o.tau = tau;
        const auto in = random_qkv(2, 3, 41, 8);
        const at::Tensor mask = length_mask({41, 29}, 41);
        // relu can zero a whole row's similarities; the row normaliser then divides ~0 by eps,
        // so keep relu's inputs mostly positive to compare well-conditioned outputs.
        const double shift = f == FeatureMap::Relu ? 0.5 : 0.0;
        expect_matches([&](auto& q, auto& k, auto& v) { return linear_attention(q, k, v, o, mask); },
                       [&](auto& q, auto& k, auto& v) { return reference(q, k, v, mask, o); }, in.q + shift,
                       in.k + shift, in.v);
      }
}

TEST(AttentionLinear, MaskedKeysContributeNothing) {
  at::manual_seed(31);
  const auto in = random_qkv(1, 2, 30, 8);
  const at::Tensor mask = length_mask({20}, 30);
  for (const auto n : {LinearNormalization::Row, LinearNormalization::Tau}) {
    LinearAttentionOptions o;
    o.normalization = n;
    const at::Tensor padded = linear_attention(in.q, in.k, in.v, o, mask);
    const at::Tensor cut = linear_attention(in.q, in.k.narrow(2, 0, 20), in.v.narrow(2, 0, 20), o);
    EXPECT_LT(rel_error(padded, cut), 1e-12);
  }
}

TEST(AttentionLinear, ParsesNames) {
  EXPECT_EQ(parse_feature_map("elu+1"), FeatureMap::EluPlusOne);
  EXPECT_EQ(parse_feature_map("softplus"), FeatureMap::Softplus);
  EXPECT_THROW(parse_feature_map("tanh"), UserError);
  EXPECT_THROW(parse_linear_normalization("none"), UserError);
}

}  // namespace
}  // namespace lrb
