#pragma once
// Time-aware linear attention (TALA, MixFormer, arXiv 2608.09468) in the readings that are
// well defined. The paper's parallel form (its Eq. 14) is
//   O = ((phi(Q) phi(K)^T) (.) D) V,   D[n,m] = w^(n-m) G[n,m] for n >= m, else 0,
// with a scalar decay w per head and a learned positional bias G; its recurrent form
// (Eq. 15) is S_n = wG (.) S_(n-1) + k_n^T v_n, o_n = q_n S_n. The two cannot be the same
// function as printed: G is T x T in Eq. 14 and multiplies the d x d state elementwise in
// Eq. 15, and Eq. 12's normaliser is missing from both. The readings (`bias`):
//   none      G = 1: retention (RetNet, arXiv 2307.08621); parallel, recurrent and
//             chunkwise forms agree.
//   relative  G[n,m] = g(min(n-m, w)): a per-head table of w individual distances and one
//             value g(w) for every distance >= w. The parallel form is exact; so is a
//             recurrence that keeps the decayed state S_n plus the last w (k, v) pairs,
//             because D splits into g(w) times retention's mask and a band of width w:
//               D[n,m] = g(w) w^(n-m) + (g(n-m) - g(w)) w^(n-m) [n-m < w].
//             Recurrent and chunkwise forms compute the first term as retention does and the
//             band from the last w keys of each query (in blocks of 64 queries: O(N (64 + w))
//             scores); what a step needs is a fixed-size state plus w pairs.
//   pairwise  G a free T x T matrix: parallel only. The weight of key m at query n is a
//             separate number for every pair, so no fixed-size state can carry it; the
//             recurrent and chunkwise forms are configuration errors saying so.
// `normalise` adds Eq. 12's denominator, o_n = sum_m D[n,m] (phi(q_n).phi(k_m)) v_m /
// sum_m D[n,m] (phi(q_n).phi(k_m)), in every form: each form runs on v with a column of
// ones appended and divides by that column, so the normaliser is the same computation as
// the numerator. It needs a positive feature map: phi(x) = exp(x / ||x||) (Eq. 11), which
// feature_map = auto picks when normalise is on (identity otherwise, i.e. retention).
// A fourth form, `eq15`, is Eq. 15 as printed, read in the one way a d x d state allows:
// S_n = w G[n, n-1] S_(n-1) + k_n^T v_n (the bias between consecutive positions as a
// per-step factor), no normaliser. It equals the parallel form only when G[n,n] = 1 and G
// is multiplicative (G[n,m] = prod_(m<j<=n) G[j,j-1]): never for a general relative or
// pairwise G. It is there to measure the paper's claim, not to train with.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>

namespace lrb {

enum class TalaForm { Parallel, Recurrent, Chunkwise, Eq15 };
enum class TalaBias { None, Relative, Pairwise };
enum class TalaFeatureMap { Identity, ExpNorm };

TalaForm parse_tala_form(const std::string& name);  // parallel | recurrent | chunkwise | eq15
TalaBias parse_tala_bias(const std::string& name);  // none | relative | pairwise
const char* tala_form_name(TalaForm f);
const char* tala_bias_name(TalaBias b);
// "auto" (exp-norm when normalising, else identity), "identity" or "exp-norm"; identity with
// normalise is refused (the denominator could be zero or negative).
TalaFeatureMap resolve_tala_feature_map(const std::string& name, bool normalise);

struct TalaOptions {
  TalaForm form = TalaForm::Chunkwise;
  TalaBias bias = TalaBias::None;
  bool normalise = false;
  TalaFeatureMap feature_map = TalaFeatureMap::Identity;
  std::int64_t chunk = 64;  // chunkwise form
};

// Throws UserError with the reason when the combination has no well-defined computation:
// pairwise bias in the recurrent or chunkwise form, eq15 with the normaliser, identity
// feature map with the normaliser, chunk < 1.
void check_tala_options(const TalaOptions& o);

// q, k, v [B, H, N, d] (v may have its own last dim); causal, so q and k share N.
// mask [B, N] bool (true = real token): masked keys contribute nothing.
// decays float [H] in (0, 1], constants (not differentiated); undefined: retention_decays(H).
// bias: none: undefined; relative: [H, w+1] = g(0..w-1), g(w); pairwise: [H, T, T] with
//   T >= N (the top-left N x N block is used). Differentiable. Must be positive with the
//   normaliser (a negative D could zero the denominator).
// write [B, H, N] (optional): per-key write weights multiplying phi(k) (memory experts'
//   routing), differentiable.
// Parallel: O(N^2) memory. Recurrent: retention's token-by-token recurrence (O(N d dv) in
// training) plus, for relative, the band. Chunkwise: O(N chunk + N w) memory. No form but
// parallel builds an N x N tensor. eq15: a token loop with autograd through it (a
// diagnostic; O(N d dv) memory).
at::Tensor tala(const TalaOptions& o, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                const at::Tensor& mask = {}, const at::Tensor& decays = {}, const at::Tensor& bias = {},
                const at::Tensor& write = {});

// D[h, n, m] of the parallel form as float64 [H, N, N] (the reference the tests and the
// model's form check compare against): decays [H], bias as for tala().
at::Tensor tala_decay_mask(TalaBias bias_kind, const at::Tensor& decays, const at::Tensor& bias, std::int64_t tokens);

// Query-key scores computed over the batch (heads H): parallel B*H*N^2; recurrent the
// relative band (0 without relative bias): B*H*(N w - w(w-1)/2) where the fused band runs
// (fused_band: tala_band_fused_applies, tala_band.h), else B*H*ceil(N/b)*b*(b+w-1) with
// b = min(64, N); chunkwise retention's chunks plus the band; eq15 0.
std::int64_t tala_score_elements(const TalaOptions& o, std::int64_t batch, std::int64_t heads, std::int64_t tokens,
                                 std::int64_t window, bool fused_band);

// A random positive bias for the attend command and the tests: exp(std * N(0, 1)) with a
// generator seeded by `seed`; relative [H, w+1], pairwise [H, T, T]; undefined for none.
at::Tensor tala_random_bias(TalaBias bias, std::int64_t heads, std::int64_t tokens, std::int64_t window, double std,
                            std::uint64_t seed);

}  // namespace lrb
