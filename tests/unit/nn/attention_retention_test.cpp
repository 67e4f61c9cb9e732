#include <gtest/gtest.h>

#include <cmath>

#include "tests/support/attention_test_util.h"
#include "suite/core/errors.h"
#include "suite/nn/attention/retention.h"

namespace lrb {
namespace {

using namespace lrb::test;

// D[h, n, m] = gamma_h^(n-m) for n >= m, from std::pow.
at::Tensor decay_matrix(std::int64_t H, std::int64_t N) {
  at::Tensor D = at::zeros({1, H, N, N}, at::kDouble);
  auto a = D.accessor<double, 4>();
  for (std::int64_t h = 0; h < H; ++h) {
    const double gamma = 1.0 - std::pow(2.0, -5.0 - static_cast<double>(h));
    for (std::int64_t n = 0; n < N; ++n)
      for (std::int64_t m = 0; m <= n; ++m) a[0][h][n][m] = std::pow(gamma, static_cast<double>(n - m));
  }
  return D;
}

at::Tensor reference(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& mask,
                     const at::Tensor& D) {
  at::Tensor kk = mask.defined() ? k * mask.view({mask.size(0), 1, -1, 1}).to(k.scalar_type()) : k;
  return at::matmul(at::matmul(q, kk.transpose(-2, -1)) * D.to(q.scalar_type()), v);
}

TEST(AttentionRetention, DecaysPerHead) {
  const at::Tensor g = retention_decays(4);
  EXPECT_DOUBLE_EQ(g[0].item<double>(), 1 - 1.0 / 32);
  EXPECT_DOUBLE_EQ(g[3].item<double>(), 1 - 1.0 / 256);
}

TEST(AttentionRetention, EveryFormMatchesTheReference) {
  at::manual_seed(40);
  const std::int64_t B = 2, H = 4, N = 45, d = 8;
  const at::Tensor D = decay_matrix(H, N);
  for (const bool masked : {false, true}) {
    const at::Tensor mask = masked ? length_mask({45, 31}, N) : at::Tensor();
    for (const auto form : {RetentionForm::Parallel, RetentionForm::Recurrent, RetentionForm::Chunkwise})
      for (const std::int64_t chunk : {8, 16, 64}) {
        if (form != RetentionForm::Chunkwise && chunk != 8) continue;
        const auto in = random_qkv(B, H, N, d);
        SCOPED_TRACE("form " + std::to_string(static_cast<int>(form)) + " chunk " + std::to_string(chunk));
        expect_matches([&](auto& q, auto& k, auto& v) { return retention(form, q, k, v, mask, chunk); },
                       [&](auto& q, auto& k, auto& v) { return reference(q, k, v, mask, D); }, in.q, in.k, in.v,
                       mask);
      }
  }
}

// The chunkwise form's state scan has a loop of its own for CPU float32 and float64 and
// ATen's ops elsewhere (a GPU, reduced precision): bfloat16 takes the second, against the
// float64 reference, values and gradients.
TEST(AttentionRetention, ChunkwiseInBfloat16TakesTheGenericScan) {
  at::manual_seed(42);
  const std::int64_t H = 2, N = 100;
  const auto in = random_qkv(1, H, N, 8);
  const at::Tensor D = decay_matrix(H, N);
  const at::Tensor upstream = at::randn({1, H, N, 8}, at::kDouble);
  const auto run = [&](bool reference_form, at::ScalarType type) {
    const auto leaf = [&](const at::Tensor& x) { return x.to(type).clone().requires_grad_(true); };
    const at::Tensor q = leaf(in.q), k = leaf(in.k), v = leaf(in.v);
    const at::Tensor out = reference_form ? reference(q, k, v, {}, D) : retention_chunkwise(q, k, v, {}, 16);
    out.backward(upstream.to(type));
    return std::vector<at::Tensor>{out.detach().to(at::kDouble), q.grad().to(at::kDouble), k.grad().to(at::kDouble),
                                   v.grad().to(at::kDouble)};
  };
  const auto want = run(true, at::kDouble), got = run(false, at::kBFloat16);
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_LT(rel_error(got[i], want[i]), 0.05) << "output, dq, dk, dv: " << i;
}

TEST(AttentionRetention, ThreeFormsAgreeInFloat32) {
  at::manual_seed(41);
  const auto in = random_qkv(2, 3, 200, 16);
  const at::Tensor q = in.q.to(at::kFloat), k = in.k.to(at::kFloat), v = in.v.to(at::kFloat);
  const at::Tensor parallel = retention_parallel(q, k, v);
  EXPECT_LT(rel_error(retention_recurrent(q, k, v), parallel), kTolerance);
  EXPECT_LT(rel_error(retention_chunkwise(q, k, v, {}, 32), parallel), kTolerance);
  EXPECT_LT(rel_error(retention_chunkwise(q, k, v, {}, 30), parallel), kTolerance);  // N not a multiple
}

TEST(AttentionRetention, RejectsBadInput) {
  const auto in = random_qkv(1, 2, 10, 4, /*Nk=*/12);
  EXPECT_THROW(retention_parallel(in.q, in.k, in.v), UserError);
  EXPECT_THROW(parse_retention_form("fast"), UserError);
  const auto sq = random_qkv(1, 2, 10, 4);
  EXPECT_THROW(retention_chunkwise(sq.q, sq.k, sq.v, {}, 0), UserError);
  EXPECT_THROW(retention_parallel(sq.q, sq.k, sq.v, {}, at::tensor({0.5, 1.5}, at::kDouble)), UserError);
}

}  // namespace
}  // namespace lrb
