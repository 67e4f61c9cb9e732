#include <gtest/gtest.h>
#include <torch/csrc/autograd/autograd.h>

#include <cmath>

#include "suite/core/errors.h"
#include "suite/nn/attention/retention.h"
#include "suite/nn/cpu/retention_chunks.h"
#include "suite/runtime/torch_compat_autocast.h"
#include "tests/support/attention_test_util.h"

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

// The chunkwise form on the CPU in float32 and float64 walks its chunks fused
// (retention_chunks.h); against the same form composed of LibTorch's ops, outputs and the
// gradients of q, k and v: masked or not, chunks that divide N or not, a chunk longer than N,
// chunks of one token, one token, values wider and narrower than the keys, a strided q.
TEST(AttentionRetention, FusedChunksMatchTheComposedForm) {
  at::manual_seed(43);
  struct Case {
    std::int64_t B, H, N, d, dv, chunk;
    std::vector<std::int64_t> lengths;  // of the key mask, empty for none
  };
  const std::vector<Case> cases = {{2, 3, 100, 8, 8, 16, {}},   {2, 3, 100, 8, 12, 30, {100, 41}},
                                   {1, 2, 45, 16, 6, 64, {}},   {1, 2, 7, 4, 4, 1, {5}},
                                   {2, 1, 1, 8, 8, 64, {}},     {1, 4, 130, 8, 8, 64, {97}}};
  for (const Case& c : cases)
    for (const at::ScalarType type : {at::kDouble, at::kFloat}) {
      SCOPED_TRACE("N " + std::to_string(c.N) + " chunk " + std::to_string(c.chunk) + " dv " + std::to_string(c.dv) +
                   (c.lengths.empty() ? "" : " masked") + " " + at::toString(type));
      const at::Tensor q = at::randn({c.B, c.H, c.N, c.d}, at::kDouble), k = at::randn({c.B, c.H, c.N, c.d}, at::kDouble);
      const at::Tensor v = at::randn({c.B, c.H, c.N, c.dv}, at::kDouble);
      const at::Tensor upstream = at::randn({c.B, c.H, c.N, c.dv}, at::kDouble);
      const at::Tensor mask = c.lengths.empty() ? at::Tensor() : length_mask(c.lengths, c.N);
      const auto form = [&](const std::vector<at::Tensor>& x) { return retention_chunkwise(x[0], x[1], x[2], mask, c.chunk); };
      ASSERT_TRUE(retention_chunks_fused_applies(q.to(type)));
      const auto want = run_on_path(retention_chunks_use_general_path, true, {q, k, v}, form, upstream, type, false);
      const auto got = run_on_path(retention_chunks_use_general_path, false, {q, k, v}, form, upstream, type, true);
      const double tolerance = type == at::kDouble ? 1e-12 : 2e-5;
      for (std::size_t i = 0; i < want.size(); ++i)
        EXPECT_LT(rel_error(got[i], want[i]), tolerance) << "output, dq, dk, dv: " << i;
    }
}

// Its backward under create_graph runs LibTorch's ops, so second derivatives hold: the gradient
// of sum(dq^2) + sum(dv^2) with respect to q, k and v (and to the upstream gradient) against
// the composed form's, in float64.
TEST(AttentionRetention, FusedChunksHaveSecondDerivatives) {
  at::manual_seed(44);
  const auto in = random_qkv(1, 2, 40, 4);
  const at::Tensor upstream0 = at::randn({1, 2, 40, 4}, at::kDouble);
  const auto run = [&](bool general) {
    const bool before = retention_chunks_use_general_path(general);
    const at::Tensor q = in.q.clone().requires_grad_(true), k = in.k.clone().requires_grad_(true),
                     v = in.v.clone().requires_grad_(true), upstream = upstream0.clone().requires_grad_(true);
    const at::Tensor out = retention_chunkwise(q, k, v, {}, 16);
    const auto first = torch::autograd::grad({out}, {q, v}, {upstream}, /*retain_graph=*/true, /*create_graph=*/true);
    const at::Tensor penalty = first[0].pow(2).sum() + first[1].pow(2).sum();
    const auto second = torch::autograd::grad({penalty}, {q, k, v, upstream});
    retention_chunks_use_general_path(before);
    return second;
  };
  const auto want = run(true), got = run(false);
  for (std::size_t i = 0; i < want.size(); ++i) {
    ASSERT_TRUE(got[i].defined()) << i;
    EXPECT_LT(rel_error(got[i], want[i]), 1e-12) << "d/dq, d/dk, d/dv, d/dupstream: " << i;
  }
}

TEST(AttentionRetention, FusedChunksTakeCpuFloatsOutsideAutocast) {
  const at::Tensor x = at::zeros({1, 1, 1, 2, 2});
  EXPECT_TRUE(retention_chunks_fused_applies(x));
  EXPECT_TRUE(retention_chunks_fused_applies(x.to(at::kDouble)));
  EXPECT_FALSE(retention_chunks_fused_applies(x.to(at::kBFloat16)));
  EXPECT_FALSE(retention_chunks_fused_applies(at::Tensor()));
  torch_compat::set_autocast_enabled(at::kCPU, true);
  const bool under_autocast = retention_chunks_fused_applies(x);
  torch_compat::set_autocast_enabled(at::kCPU, false);
  EXPECT_FALSE(under_autocast);
  const bool before = retention_chunks_use_general_path(true);
  EXPECT_FALSE(retention_chunks_fused_applies(x));
  retention_chunks_use_general_path(before);
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
