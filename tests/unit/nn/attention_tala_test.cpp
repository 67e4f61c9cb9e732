// TALA (MixFormer's time-aware linear attention): every form against a float64 reference
// written from the definitions, forms that must agree agree, forms that cannot agree do not,
// and the combinations with no fixed-size state are refused with the reason.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "suite/core/errors.h"
#include "suite/nn/attention/kernel_registry.h"
#include "suite/nn/attention/retention.h"
#include "suite/nn/attention/tala.h"
#include "suite/nn/cpu/tala_band.h"
#include "suite/runtime/counting_allocator.h"
#include "tests/support/attention_test_util.h"

namespace lrb {
namespace {

using namespace lrb::test;

// G[h, n, m] as the readings define it, element by element.
double bias_at(TalaBias kind, const at::Tensor& bias, std::int64_t h, std::int64_t n, std::int64_t m) {
  switch (kind) {
    case TalaBias::None: return 1.0;
    case TalaBias::Relative: {
      const std::int64_t w = bias.size(1) - 1;
      return bias[h][std::min(n - m, w)].item<double>();
    }
    case TalaBias::Pairwise: return bias[h][n][m].item<double>();
  }
  return 0;
}

// D[0, h, n, m] = decay_h^(n-m) G[h, n, m] for n >= m, from std::pow.
at::Tensor reference_mask(TalaBias kind, const at::Tensor& bias, std::int64_t H, std::int64_t N) {
  const at::Tensor decays = retention_decays(H);
  at::Tensor D = at::zeros({1, H, N, N}, at::kDouble);
  auto a = D.accessor<double, 4>();
  for (std::int64_t h = 0; h < H; ++h)
    for (std::int64_t n = 0; n < N; ++n)
      for (std::int64_t m = 0; m <= n; ++m)
        a[0][h][n][m] = std::pow(decays[h].item<double>(), static_cast<double>(n - m)) * bias_at(kind, bias, h, n, m);
  return D;
}

// Eq. 12 / Eq. 14 written out: phi on q and k, masked keys dropped, the score matrix times
// D, the normaliser as the row sum of that matrix.
at::Tensor reference(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& mask,
                     const at::Tensor& D, bool normalise) {
  auto phi = [&](const at::Tensor& x) { return normalise ? at::exp(x / x.norm(2, -1, true)) : x; };
  at::Tensor kk = phi(k);
  if (mask.defined()) kk = kk * mask.view({mask.size(0), 1, -1, 1}).to(k.scalar_type());
  const at::Tensor A = at::matmul(phi(q), kk.transpose(-2, -1)) * D.to(q.scalar_type());
  const at::Tensor out = at::matmul(A, v);
  return normalise ? out / A.sum(-1, true) : out;
}

TalaOptions options(TalaForm form, TalaBias bias, bool normalise, std::int64_t chunk = 64) {
  TalaOptions o;
  o.form = form;
  o.bias = bias;
  o.normalise = normalise;
  o.feature_map = resolve_tala_feature_map("auto", normalise);
  o.chunk = chunk;
  return o;
}

std::string label(TalaForm f, TalaBias b, bool normalise, std::int64_t chunk) {
  return std::string(tala_form_name(f)) + " bias=" + tala_bias_name(b) + " normalise=" + (normalise ? "true" : "false") +
         " chunk=" + std::to_string(chunk);
}

TEST(AttentionTala, EveryFormMatchesTheReference) {
  at::manual_seed(70);
  const std::int64_t B = 2, H = 3, N = 37, d = 8, w = 5;
  for (const TalaBias kind : {TalaBias::None, TalaBias::Relative, TalaBias::Pairwise}) {
    const at::Tensor bias = tala_random_bias(kind, H, N, w, 0.5, 3);
    const at::Tensor D = reference_mask(kind, bias, H, N);
    for (const bool normalise : {false, true})
      for (const bool masked : {false, true}) {
        const at::Tensor mask = masked ? length_mask({37, 23}, N) : at::Tensor();
        for (const auto form : {TalaForm::Parallel, TalaForm::Recurrent, TalaForm::Chunkwise})
          for (const std::int64_t chunk : {8, 16}) {
            if (form != TalaForm::Chunkwise && chunk != 8) continue;
            if (kind == TalaBias::Pairwise && form != TalaForm::Parallel) continue;
            const auto in = random_qkv(B, H, N, d);
            SCOPED_TRACE(label(form, kind, normalise, chunk) + (masked ? " masked" : ""));
            const TalaOptions o = options(form, kind, normalise, chunk);
            expect_matches(
                [&](auto& q, auto& k, auto& v) {
                  return tala(o, q, k, v, mask, {}, bias.defined() ? bias.to(q.device(), q.scalar_type()) : bias);
                },
                [&](auto& q, auto& k, auto& v) { return reference(q, k, v, mask, D, normalise); }, in.q, in.k, in.v,
                mask);
          }
      }
  }
}

TEST(AttentionTala, RelativeFormsAgreeAcrossBandBlocksAndShortInputs) {
  // The band is computed in blocks of 64 queries: lengths around and beyond a block, windows
  // longer than the input.
  at::manual_seed(77);
  for (const std::int64_t N : {1, 3, 64, 65, 150})
    for (const std::int64_t w : {1, 5, 70}) {
      const auto in = random_qkv(2, 2, N, 3);
      const at::Tensor g = tala_random_bias(TalaBias::Relative, 2, N, w, 0.5, static_cast<std::uint64_t>(N + w));
      const at::Tensor want = reference(in.q, in.k, in.v, {}, reference_mask(TalaBias::Relative, g, 2, N), false);
      for (const auto form : {TalaForm::Parallel, TalaForm::Recurrent, TalaForm::Chunkwise})
        EXPECT_LT(rel_error(tala(options(form, TalaBias::Relative, false, 16), in.q, in.k, in.v, {}, {}, g), want), 1e-12)
            << tala_form_name(form) << " N " << N << " w " << w;
    }
}

// TALA with its relative bias through the fused band and through the general (blocked) one:
// outputs and the gradients of q, k, v and the bias table, in float64 and float32 (against the
// general path in float64), at lengths around the general path's 64-query blocks, windows
// longer than the input, head sizes off the fused loops' 8-wide steps, the normaliser's extra
// value column, and a q that is a strided view.
TEST(AttentionTala, FusedBandMatchesTheGeneralPath) {
  at::manual_seed(78);
  struct Result {
    at::Tensor out, dq, dk, dv, dbias;
  };
  const auto run_tala = [](const TalaOptions& o, const Qkv& in, const at::Tensor& g, const at::Tensor& upstream,
                           at::ScalarType type, bool general, bool strided_q) {
    const auto r = run_on_path(
        tala_band_use_general_path, general, {in.q, in.k, in.v, g},
        [&](const std::vector<at::Tensor>& x) { return tala(o, x[0], x[1], x[2], {}, {}, x[3]); }, upstream, type,
        strided_q);
    return Result{r[0], r[1], r[2], r[3], r[4]};
  };
  for (const std::int64_t N : {1, 3, 64, 65, 150})
    for (const std::int64_t w : {1, 5, 70})
      for (const std::int64_t d : {3, 19})
        for (const bool normalise : {false, true})
          for (const auto form : {TalaForm::Recurrent, TalaForm::Chunkwise}) {
            const auto in = random_qkv(2, 2, N, d);
            const at::Tensor g = tala_random_bias(TalaBias::Relative, 2, N, w, 0.5, static_cast<std::uint64_t>(N + w));
            const at::Tensor upstream = at::randn({2, 2, N, d}, at::kDouble);
            const TalaOptions o = options(form, TalaBias::Relative, normalise, 16);
            SCOPED_TRACE(label(form, TalaBias::Relative, normalise, 16) + " N " + std::to_string(N) + " w " +
                         std::to_string(w) + " d " + std::to_string(d));
            const Result want = run_tala(o, in, g, upstream, at::kDouble, true, false);
            for (const auto type : {at::kDouble, at::kFloat}) {
              const Result got = run_tala(o, in, g, upstream, type, false, N > 1);
              const double tolerance = type == at::kDouble ? 1e-12 : 2e-5;
              EXPECT_LT(rel_error(got.out, want.out), tolerance) << "output, " << at::toString(type);
              EXPECT_LT(rel_error(got.dv, want.dv), tolerance) << "grad v, " << at::toString(type);
              if (normalise && N == 1) {
                // One token, normalised: the output is v itself, and q, k and the bias have
                // no gradient but rounding.
                for (const at::Tensor* x : {&got.dq, &got.dk, &got.dbias})
                  EXPECT_LT(x->abs().max().item<double>(), tolerance) << at::toString(type);
                continue;
              }
              EXPECT_LT(rel_error(got.dq, want.dq), tolerance) << "grad q, " << at::toString(type);
              EXPECT_LT(rel_error(got.dk, want.dk), tolerance) << "grad k, " << at::toString(type);
              EXPECT_LT(rel_error(got.dbias, want.dbias), tolerance) << "grad bias, " << at::toString(type);
            }
          }
}

TEST(AttentionTala, FusedBandTakesCpuFloatsOutsideAutocast) {
  const at::Tensor q = at::zeros({1, 1, 4, 2});
  EXPECT_TRUE(tala_band_fused_applies(q));
  EXPECT_TRUE(tala_band_fused_applies(q.to(at::kDouble)));
  EXPECT_FALSE(tala_band_fused_applies(q.to(at::kBFloat16)));
  EXPECT_FALSE(tala_band_fused_applies(at::zeros({4, 2})));
  const bool was = tala_band_use_general_path(true);
  EXPECT_FALSE(tala_band_fused_applies(q));
  tala_band_use_general_path(was);
  EXPECT_EQ(tala_band_fused_score_elements(2, 3, 10, 4), 2 * 3 * (10 * 4 - 6));
  EXPECT_EQ(tala_band_fused_score_elements(1, 1, 3, 8), 1 + 2 + 3);  // a window past the input
}

TEST(AttentionTala, ScalarDecayIsRetention) {
  at::manual_seed(71);
  const auto in = random_qkv(2, 4, 50, 8);
  for (const auto form : {TalaForm::Parallel, TalaForm::Recurrent, TalaForm::Chunkwise})
    EXPECT_LT(rel_error(tala(options(form, TalaBias::None, false, 16), in.q, in.k, in.v),
                        retention_parallel(in.q, in.k, in.v)),
              1e-13)
        << tala_form_name(form);
}

TEST(AttentionTala, BiasAndWriteWeightGradientsAgreeAcrossForms) {
  at::manual_seed(72);
  const std::int64_t B = 2, H = 2, N = 29, d = 4, w = 4;
  const auto in = random_qkv(B, H, N, d);
  const at::Tensor upstream = at::randn({B, H, N, d}, at::kDouble);
  const at::Tensor write0 = at::rand({B, H, N}, at::kDouble);
  for (const bool normalise : {false, true}) {
    std::vector<at::Tensor> grads;
    for (const auto form : {TalaForm::Parallel, TalaForm::Recurrent, TalaForm::Chunkwise}) {
      at::Tensor bias = tala_random_bias(TalaBias::Relative, H, N, w, 0.5, 9).requires_grad_(true);
      at::Tensor write = write0.clone().requires_grad_(true);
      tala(options(form, TalaBias::Relative, normalise, 8), in.q, in.k, in.v, {}, {}, bias, write).backward(upstream);
      grads.push_back(bias.grad());
      grads.push_back(write.grad());
    }
    for (std::size_t i = 2; i < grads.size(); ++i) EXPECT_LT(rel_error(grads[i], grads[i % 2]), 1e-12) << i;
    EXPECT_GT(grads[0].abs().min().item<double>(), 0) << "every entry of the table is used";
  }
}

// The recurrence the relative reading claims, step by step with a fixed-size memory: a
// decayed state of everything at least w tokens back, plus a ring of the last w (k, v)
// pairs. Float64, one (batch, head) at a time.
at::Tensor windowed_recurrence(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& g,
                               std::int64_t w) {
  const std::int64_t B = q.size(0), H = q.size(1), N = q.size(2), d = q.size(3), dv = v.size(3);
  const at::Tensor decays = retention_decays(H);
  at::Tensor out = at::zeros({B, H, N, dv}, at::kDouble);
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t h = 0; h < H; ++h) {
      const double gamma = decays[h].item<double>(), far = g[h][w].item<double>();
      at::Tensor state = at::zeros({d, dv}, at::kDouble);  // sum over m <= n - w of gamma^(n-m) k_m^T v_m
      std::vector<std::pair<at::Tensor, at::Tensor>> ring(static_cast<std::size_t>(w));
      for (std::int64_t n = 0; n < N; ++n) {
        state = state * gamma;
        if (n - w >= 0) {
          const auto& old = ring[static_cast<std::size_t>((n - w) % w)];  // leaves the window now
          state = state + std::pow(gamma, static_cast<double>(w)) * at::outer(old.first, old.second);
        }
        ring[static_cast<std::size_t>(n % w)] = {k[b][h][n], v[b][h][n]};
        at::Tensor o = at::matmul(q[b][h][n], state) * far;
        for (std::int64_t delta = 0; delta < std::min(w, n + 1); ++delta) {
          const auto& kv = ring[static_cast<std::size_t>((n - delta) % w)];
          o = o + std::pow(gamma, static_cast<double>(delta)) * g[h][delta].item<double>() * q[b][h][n].dot(kv.first) *
                      kv.second;
        }
        out[b][h][n] = o;
      }
    }
  return out;
}

TEST(AttentionTala, RelativeBiasHasAnExactWindowedRecurrence) {
  at::manual_seed(73);
  const std::int64_t B = 1, H = 2, N = 24, d = 3, w = 5;
  const auto in = random_qkv(B, H, N, d);
  const at::Tensor g = tala_random_bias(TalaBias::Relative, H, N, w, 0.7, 4);
  const at::Tensor parallel = tala(options(TalaForm::Parallel, TalaBias::Relative, false), in.q, in.k, in.v, {}, {}, g);
  // Exact when g is constant beyond the window, as the relative reading defines it.
  EXPECT_LT(rel_error(windowed_recurrence(in.q, in.k, in.v, g, w), parallel), 1e-13);
  EXPECT_LT(rel_error(tala(options(TalaForm::Recurrent, TalaBias::Relative, false), in.q, in.k, in.v, {}, {}, g),
                      parallel),
            1e-13);
  // A bias that keeps varying beyond w (a table over every distance) is not carried by a
  // w-window recurrence: the truncated recurrence misses it.
  const at::Tensor wide = tala_random_bias(TalaBias::Relative, H, N, N, 0.7, 5);
  at::Tensor truncated = wide.narrow(1, 0, w + 1).clone();
  const at::Tensor wide_parallel =
      tala(options(TalaForm::Parallel, TalaBias::Relative, false), in.q, in.k, in.v, {}, {}, wide);
  EXPECT_GT(rel_error(windowed_recurrence(in.q, in.k, in.v, truncated, w), wide_parallel), 1e-2);
}

TEST(AttentionTala, Eq15AsPrintedAgreesOnlyWhereGIsMultiplicative) {
  at::manual_seed(74);
  const std::int64_t B = 2, H = 2, N = 20, d = 4;
  const auto in = random_qkv(B, H, N, d);
  auto gap = [&](TalaBias kind, const at::Tensor& bias, bool normalise) {
    TalaOptions eq = options(TalaForm::Eq15, kind, false);
    eq.feature_map = resolve_tala_feature_map("auto", normalise);  // same phi, no denominator
    return rel_error(tala(eq, in.q, in.k, in.v, {}, {}, bias),
                     tala(options(TalaForm::Parallel, kind, normalise), in.q, in.k, in.v, {}, {}, bias));
  };
  EXPECT_LT(gap(TalaBias::None, {}, false), 1e-13);  // G = 1: retention's recurrence
  EXPECT_GT(gap(TalaBias::None, {}, true), 1e-2);    // Eq. 12's normaliser dropped
  EXPECT_GT(gap(TalaBias::Relative, tala_random_bias(TalaBias::Relative, H, N, 4, 0.5, 1), false), 1e-2);
  EXPECT_GT(gap(TalaBias::Pairwise, tala_random_bias(TalaBias::Pairwise, H, N, 0, 0.5, 2), false), 1e-2);
  // G[n, m] = c_n / c_m (so G[n, n] = 1): the step factors multiply out to G, and Eq. 15 holds.
  const at::Tensor s = at::randn({H, N, 1}, at::kDouble) * 0.3;
  EXPECT_LT(gap(TalaBias::Pairwise, (s - s.transpose(1, 2)).exp(), false), 1e-12);
}

TEST(AttentionTala, TheReviewersCaseTEquals3dEquals2) {
  // Eq. 15 taken literally: the T x T bias times the d x d state elementwise is undefined.
  const at::Tensor G = at::rand({3, 3}, at::kDouble) + 0.5, S = at::randn({2, 2}, at::kDouble);
  EXPECT_THROW(at::mul(G, S), c10::Error);
  // Parallel against the per-step reading of Eq. 15 at T = 3, d = 2 differs.
  at::manual_seed(75);
  const auto in = random_qkv(1, 1, 3, 2);
  const at::Tensor bias = G.unsqueeze(0);
  const at::Tensor parallel = tala(options(TalaForm::Parallel, TalaBias::Pairwise, false), in.q, in.k, in.v, {}, {}, bias);
  const at::Tensor eq15 = tala(options(TalaForm::Eq15, TalaBias::Pairwise, false), in.q, in.k, in.v, {}, {}, bias);
  EXPECT_GT(rel_error(eq15, parallel), 1e-3);
}

TEST(AttentionTala, CombinationsWithoutAFixedStateAreRefused) {
  const auto in = random_qkv(1, 2, 10, 4);
  const at::Tensor G = tala_random_bias(TalaBias::Pairwise, 2, 10, 0, 0.5, 1);
  for (const auto form : {TalaForm::Recurrent, TalaForm::Chunkwise}) {
    try {
      tala(options(form, TalaBias::Pairwise, false), in.q, in.k, in.v, {}, {}, G);
      ADD_FAILURE() << "pairwise " << tala_form_name(form) << " ran";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("not a fixed d x d state"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(check_tala_options(options(TalaForm::Eq15, TalaBias::None, true)), UserError);
  EXPECT_THROW(resolve_tala_feature_map("identity", true), UserError);
  EXPECT_THROW(parse_tala_form("fast"), UserError);
  EXPECT_THROW(parse_tala_bias("absolute"), UserError);
  // Shapes: a relative table needs [H, w+1]; a pairwise G must cover N.
  EXPECT_THROW(tala(options(TalaForm::Parallel, TalaBias::Relative, false), in.q, in.k, in.v, {}, {},
                    at::ones({3, 4}, at::kDouble)),
               UserError);
  EXPECT_THROW(tala(options(TalaForm::Parallel, TalaBias::Pairwise, false), in.q, in.k, in.v, {}, {},
                    at::ones({2, 8, 8}, at::kDouble)),
               UserError);
  EXPECT_THROW(tala(options(TalaForm::Parallel, TalaBias::Relative, true), in.q, in.k, in.v, {}, {},
                    -at::ones({2, 4}, at::kDouble)),
               UserError);
  // Through the registry, as `lrbench attend` runs it.
  const auto kernel = find_attention_kernel("tala");
  AttentionTensors t{in.q.to(at::kFloat), in.k.to(at::kFloat), in.v.to(at::kFloat)};
  EXPECT_THROW(kernel.run(kernel_options(kernel, {"bias=pairwise", "form=recurrent"}), t), UserError);
  EXPECT_NO_THROW(kernel.run(kernel_options(kernel, {"bias=pairwise", "form=parallel"}), t));
}

TEST(AttentionTala, RegistryRunsTheDirectCall) {
  at::manual_seed(76);
  const auto in = random_qkv(1, 2, 40, 8);
  AttentionTensors t{in.q, in.k, in.v};
  const auto kernel = find_attention_kernel("tala");
  const AttentionRun r =
      kernel.run(kernel_options(kernel, {"bias=relative", "window=6", "normalise=true", "form=recurrent", "seed=3"}), t);
  const at::Tensor g = tala_random_bias(TalaBias::Relative, 2, 40, 6, 0.5, 3);
  EXPECT_LT(rel_error(r.out, tala(options(TalaForm::Recurrent, TalaBias::Relative, true), in.q, in.k, in.v, {}, {}, g)),
            1e-15);
  EXPECT_EQ(r.info.at("decays").size(), 2u);
  EXPECT_EQ(r.score_elements, 1 * 2 * (40 * 6 - 6 * 5 / 2));  // each query's 6 nearest keys (the fused band)
  const bool was = tala_band_use_general_path(true);
  const AttentionRun general =
      kernel.run(kernel_options(kernel, {"bias=relative", "window=6", "normalise=true", "form=recurrent", "seed=3"}), t);
  tala_band_use_general_path(was);
  EXPECT_EQ(general.score_elements, 1 * 2 * 40 * (40 + 6 - 1));  // one band block of 40 queries
  EXPECT_LT(rel_error(general.out, r.out), 1e-13);
}

TEST(AttentionTala, RecurrentAndChunkwiseAllocateNoNByN) {
  constexpr std::int64_t B = 1, H = 2, N = 4096, d = 16, w = 16;
  constexpr std::int64_t score_bytes = B * H * N * N * 4;
  CpuMemoryCounter::install();
  const at::Tensor g = tala_random_bias(TalaBias::Relative, H, N, w, 0.5, 1).to(at::kFloat);
  for (const auto form : {TalaForm::Recurrent, TalaForm::Chunkwise}) {
    at::Tensor q = at::randn({B, H, N, d}).requires_grad_(true);
    at::Tensor k = at::randn({B, H, N, d}).requires_grad_(true);
    at::Tensor v = at::randn({B, H, N, d}).requires_grad_(true);
    PeakScope scope;
    tala(options(form, TalaBias::Relative, true), q, k, v, {}, {}, g).sum().backward();
    EXPECT_LT(scope.peak_above_base(), score_bytes / 8) << tala_form_name(form);
  }
}

}  // namespace
}  // namespace lrb
