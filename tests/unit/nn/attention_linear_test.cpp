#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "suite/core/errors.h"
#include "suite/nn/attention/linear.h"
#include "suite/nn/cpu/linear_fused.h"
#include "tests/support/attention_test_util.h"

namespace lrb {
namespace {

using namespace lrb::test;

at::Tensor psi(const at::Tensor& x, FeatureMap f) {
  if (f == FeatureMap::EluPlusOne) return at::where(x.gt(0), x + 1, x.exp());
  if (f == FeatureMap::Relu) return x.clamp_min(0);
  return (1 + x.exp()).log();
}

// The N x N form, in float64: A_ij = psi(q_i).psi(k_j) for real keys, with q and k divided
// by sqrt(tau) first for row-input; out = A v / (row sum + eps), or A v / tau for output.
at::Tensor reference(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& mask,
                     const LinearAttentionOptions& o) {
  const at::Tensor real = mask.defined() ? mask.sum(1).to(q.scalar_type())
                                         : at::full({q.size(0)}, double(k.size(2)), q.options());
  const at::Tensor tau = (o.tau > 0 ? at::full({q.size(0)}, o.tau, q.options()) : real.sqrt()).view({-1, 1, 1, 1});
  const bool inputs = o.normalization == LinearNormalization::RowInput;
  at::Tensor a = at::matmul(psi(inputs ? q / tau.sqrt() : q, o.feature_map),
                            psi(inputs ? k / tau.sqrt() : k, o.feature_map).transpose(-2, -1));
  if (mask.defined()) a = a * key_pattern(mask).to(a.scalar_type());
  if (o.normalization == LinearNormalization::Output) return at::matmul(a, v) / tau;
  return at::matmul(a, v) / (a.sum(-1, true) + o.eps);
}

const LinearNormalization kReadings[] = {LinearNormalization::Row, LinearNormalization::Output,
                                         LinearNormalization::RowInput};

TEST(AttentionLinear, EveryFeatureMapAndReadingMatchesTheQuadraticForm) {
  at::manual_seed(30);
  for (const auto f : {FeatureMap::EluPlusOne, FeatureMap::Relu, FeatureMap::Softplus})
    for (const auto n : kReadings)
      for (const double tau : {0.0, 3.5}) {
        if (!uses_tau(n) && tau > 0) continue;
        SCOPED_TRACE(std::string(feature_map_name(f)) + " " + linear_normalization_name(n) + " tau " +
                     std::to_string(tau));
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
  for (const auto n : kReadings) {
    LinearAttentionOptions o;
    o.normalization = n;
    const at::Tensor padded = linear_attention(in.q, in.k, in.v, o, mask);
    const at::Tensor cut = linear_attention(in.q, in.k.narrow(2, 0, 20), in.v.narrow(2, 0, 20), o);
    EXPECT_LT(rel_error(padded, cut), 1e-12) << linear_normalization_name(n);
  }
}

double rms(const at::Tensor& x) { return x.pow(2).mean().sqrt().item<double>(); }

TEST(AttentionLinear, RowReadingsAverageTheValuesOutputDoesNot) {
  // Random normal q, k, v, head dim 32, as in MAELRE's first block. With Z' every output row
  // is a convex combination of the value rows: each coordinate lies within the values'
  // range and the RMS stays below the values'. Without Z' (output) the RMS is tens of times
  // the values' at every N: the sum over keys grows like N, 1/sqrt(N) takes off only half.
  at::manual_seed(32);
  for (const std::int64_t n : {256, 1024, 4096}) {
    const auto in = random_qkv(1, 2, n, 32);
    const at::Tensor vmin = std::get<0>(in.v.min(2, true)), vmax = std::get<0>(in.v.max(2, true));
    for (const auto reading : kReadings)
      for (const double tau : {0.0, 4.0}) {
        SCOPED_TRACE(std::string(linear_normalization_name(reading)) + " N " + std::to_string(n) + " tau " +
                     std::to_string(tau));
        if (!uses_tau(reading) && tau > 0) continue;
        LinearAttentionOptions o;
        o.normalization = reading;
        o.tau = tau;
        const at::Tensor out = linear_attention(in.q, in.k, in.v, o);
        const double ratio = rms(out) / rms(in.v);
        if (has_row_normaliser(reading)) {
          EXPECT_LT(ratio, 1.0);
          EXPECT_TRUE(out.ge(vmin - 1e-9).all().item<bool>()) << "below the smallest value";
          EXPECT_TRUE(out.le(vmax + 1e-9).all().item<bool>()) << "above the largest value";
        } else {
          EXPECT_GT(ratio, 10.0);
        }
      }
  }
}

TEST(AttentionLinear, TauOnTheInputsIsATemperature) {
  // row-input: a large tau flattens the weights, so the output tends to the mean of the
  // values; a small tau sharpens them. tau = 0 is sqrt(N) over each sample's real keys.
  at::manual_seed(33);
  const auto in = random_qkv(2, 2, 64, 8);
  const at::Tensor mean = in.v.mean(2, true).expand_as(in.v);
  auto distance_to_mean = [&](double tau) {
    LinearAttentionOptions o;
    o.normalization = LinearNormalization::RowInput;
    o.tau = tau;
    return rms(linear_attention(in.q, in.k, in.v, o) - mean);
  };
  EXPECT_GT(distance_to_mean(0.25), distance_to_mean(1.0));
  EXPECT_GT(distance_to_mean(1.0), distance_to_mean(64.0));
  EXPECT_LT(distance_to_mean(1e8), 1e-3 * distance_to_mean(1.0));
  LinearAttentionOptions automatic;
  automatic.normalization = LinearNormalization::RowInput;
  LinearAttentionOptions eight = automatic;
  eight.tau = 8.0;  // sqrt(64)
  EXPECT_LT(rel_error(linear_attention(in.q, in.k, in.v, automatic), linear_attention(in.q, in.k, in.v, eight)), 1e-12);
  // With Z' a scalar on the output cancels: row is row-input at tau = 1 ...
  LinearAttentionOptions row, one = automatic;
  one.tau = 1.0;
  EXPECT_LT(rel_error(linear_attention(in.q, in.k, in.v, one), linear_attention(in.q, in.k, in.v, row)), 1e-12);
  // ... and relu, positively homogeneous, makes tau cancel inside psi too (up to eps; the
  // shift keeps every row's Z' well above it).
  row.feature_map = eight.feature_map = FeatureMap::Relu;
  EXPECT_LT(rel_error(linear_attention(in.q + 1, in.k + 1, in.v, eight), linear_attention(in.q + 1, in.k + 1, in.v, row)),
            1e-6);
  // row has no tau to set.
  row.tau = 2.0;
  EXPECT_THROW(linear_attention(in.q, in.k, in.v, row), UserError);
}

// Linear attention through the fused passes (linear_fused.h) and through LibTorch's
// composition: outputs and the gradients of q, k and v, in float64 and float32 (against the
// composition in float64), every reading and feature map, with and without masked keys, at
// lengths below, at and past the passes' 8-float steps, head sizes off those steps, and a q
// that is a strided view.
TEST(AttentionLinear, FusedPassesMatchLibTorchsComposition) {
  at::manual_seed(34);
  struct Result {
    at::Tensor out, dq, dk, dv;
  };
  const auto run_linear = [](const LinearAttentionOptions& o, const Qkv& in, const at::Tensor& mask,
                             const at::Tensor& upstream, at::ScalarType type, bool general, bool strided_q) {
    const auto r = run_on_path(
        linear_attention_use_general_path, general, {in.q, in.k, in.v},
        [&](const std::vector<at::Tensor>& x) { return linear_attention(x[0], x[1], x[2], o, mask); }, upstream,
        type, strided_q);
    return Result{r[0], r[1], r[2], r[3]};
  };
  for (const std::int64_t N : {1, 7, 8, 41})
    for (const std::int64_t d : {3, 12})
      for (const bool masked : {false, true})
        for (const auto f : {FeatureMap::EluPlusOne, FeatureMap::Relu})
          for (const auto n : kReadings) {
            SCOPED_TRACE(std::string(feature_map_name(f)) + " " + linear_normalization_name(n) + " N " +
                         std::to_string(N) + " d " + std::to_string(d) + (masked ? " masked" : ""));
            LinearAttentionOptions o;
            o.feature_map = f;
            o.normalization = n;
            const double shift = f == FeatureMap::Relu ? 0.5 : 0.0;  // as above: rows well above eps
            auto in = random_qkv(2, 2, N, d);
            in.q = in.q + shift;
            in.k = in.k + shift;
            const at::Tensor mask = masked ? length_mask({N, (N + 1) / 2}, N) : at::Tensor();
            const at::Tensor upstream = at::randn({2, 2, N, d}, at::kDouble);
            const Result want = run_linear(o, in, mask, upstream, at::kDouble, true, false);
            for (const auto type : {at::kDouble, at::kFloat}) {
              const Result got = run_linear(o, in, mask, upstream, type, false, N > 1);
              const double tolerance = type == at::kDouble ? 1e-12 : 2e-5;
              EXPECT_LT(rel_error(got.out, want.out), tolerance) << "output, " << at::toString(type);
              EXPECT_LT(rel_error(got.dv, want.dv), tolerance) << "grad v, " << at::toString(type);
              if (N == 1 && has_row_normaliser(n)) {
                // One key under Z': the output is v itself but for eps, so the gradients of q
                // and k are eps-sized and their relative error is rounding over rounding.
                EXPECT_LT(max_abs_diff(got.dq, want.dq), tolerance) << "grad q, " << at::toString(type);
                EXPECT_LT(max_abs_diff(got.dk, want.dk), tolerance) << "grad k, " << at::toString(type);
                continue;
              }
              EXPECT_LT(rel_error(got.dq, want.dq), tolerance) << "grad q, " << at::toString(type);
              EXPECT_LT(rel_error(got.dk, want.dk), tolerance) << "grad k, " << at::toString(type);
            }
          }
}

// psi = elu + 1 through the fused pass, in float32, value and derivative, against exp(x) below
// 0 and x + 1 above in float64 (not against LibTorch's float32 elu + 1, which cancels: it is 0
// below about -17, where exp(x) is 4e-8): random values across the range at lengths around
// the 8- and 16-float steps, and the edges (in every lane of both widths): infinities, signed
// zeros, and the exponents where exp leaves float's normal range (the pass gives 0 below -87,
// where exp is under 1.7e-38); under every compilation (AVX-512, AVX2, the baseline).
TEST(AttentionLinear, EluPlusOneIsExpBelowZeroAndXPlusOneAbove) {
  test::for_each_simd_level([](const char* code) {
    SCOPED_TRACE(code);
    at::manual_seed(35);
    const float inf = std::numeric_limits<float>::infinity(), tiny = std::numeric_limits<float>::min();
    const std::vector<float> edges = {-inf, -1000.0f, -88.0f, -87.5f, -87.0f, -86.9f, -20.0f, -1e-8f, -0.0f, 0.0f,
                                      1e-8f, 0.5f, 3.0f, 1e30f, inf};
    // 15 edges three times over: each edge in lanes of both widths, and the scalar tail.
    std::vector<at::Tensor> inputs = {at::tensor(edges), at::tensor(edges).repeat({3})};
    for (const std::int64_t n : {1, 7, 8, 9, 15, 16, 17, 33, 1000}) inputs.push_back(at::randn({n}) * 10);
    for (const at::Tensor& values : inputs) {
      const at::Tensor x = values.clone().requires_grad_(true);
      const at::Tensor y = elu_plus_one(x);
      const at::Tensor g = at::randn(values.sizes());
      y.backward(g);
      const at::Tensor xd = values.to(at::kDouble);
      const at::Tensor want = at::where(xd.gt(0), xd + 1, xd.exp());
      const at::Tensor want_grad = g.to(at::kDouble) * at::where(xd.gt(0), at::ones_like(xd), xd.exp());
      const at::Tensor normal = want.ge(tiny) & want.isfinite();
      const auto relative = [&](const at::Tensor& got, const at::Tensor& ref) {
        const at::Tensor e = (got.to(at::kDouble) - ref).abs() / ref.abs().clamp_min(tiny);
        return e.masked_select(normal).max().item<double>();
      };
      EXPECT_LT(relative(y.detach(), want), 4e-7) << values;
      EXPECT_LT(relative(x.grad(), want_grad), 4e-7) << values;
      const at::Tensor under = normal.logical_not() & want.isfinite();
      if (under.any().item<bool>()) {
        EXPECT_LE((y.detach().to(at::kDouble) - want).masked_select(under).abs().max().item<double>(), tiny);
      }
      EXPECT_TRUE(y.detach().masked_select(want.isinf()).isinf().all().item<bool>());
    }
    // NaN stays NaN, forward and backward, in vectors and in the tail.
    const at::Tensor nan = at::full({35}, std::numeric_limits<float>::quiet_NaN()).requires_grad_(true);
    const at::Tensor y = elu_plus_one(nan);
    y.backward(at::ones({35}));
    EXPECT_TRUE(y.detach().isnan().all().item<bool>());
    EXPECT_TRUE(nan.grad().isnan().all().item<bool>());
  });
}

TEST(AttentionLinear, FusedPassesTakeCpuFloatsOutsideAutocast) {
  const at::Tensor x = at::zeros({1, 1, 4, 2});
  EXPECT_TRUE(linear_fused_applies(x));
  EXPECT_TRUE(linear_fused_applies(x.to(at::kDouble)));
  EXPECT_FALSE(linear_fused_applies(x.to(at::kBFloat16)));
  EXPECT_FALSE(linear_fused_applies(at::Tensor()));
  const bool was = linear_attention_use_general_path(true);
  EXPECT_FALSE(linear_fused_applies(x));
  linear_attention_use_general_path(was);
}

TEST(AttentionLinear, FlopsCountTheNormaliserAndTheScaling) {
  const double n = 1000, m = 800, dim = 64, heads = 4, dh = dim / heads;
  const double products = 2 * (n + m) * dim * dh;
  EXPECT_EQ(linear_attention_flops(n, m, dim, heads, LinearNormalization::Output), products + n * dim);
  EXPECT_EQ(linear_attention_flops(n, m, dim, heads, LinearNormalization::Row),
            products + m * dim + 2 * n * dim + n * dim);
  EXPECT_EQ(linear_attention_flops(n, m, dim, heads, LinearNormalization::RowInput),
            products + m * dim + 2 * n * dim + n * dim + (n + m) * dim);
}

TEST(AttentionLinear, ParsesNames) {
  EXPECT_EQ(parse_feature_map("elu+1"), FeatureMap::EluPlusOne);
  EXPECT_EQ(parse_feature_map("softplus"), FeatureMap::Softplus);
  EXPECT_THROW(parse_feature_map("tanh"), UserError);
  EXPECT_THROW(parse_linear_normalization("none"), UserError);
  EXPECT_THROW(parse_linear_normalization("tau"), UserError);  // ambiguous: output and row-input both use tau
  for (const auto n : kReadings) EXPECT_EQ(parse_linear_normalization(linear_normalization_name(n)), n);
}

}  // namespace
}  // namespace lrb
