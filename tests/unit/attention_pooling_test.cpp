#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "attention_test_util.h"
#include "suite/nn/attention/pooling.h"

namespace lrb {
namespace {

using namespace lrb::test;

std::vector<std::int64_t> axes(const std::vector<std::int64_t>& v, std::size_t n) {
  return v.size() == n ? v : std::vector<std::int64_t>(n, v[0]);
}

// Pooling written out with strided slices (no conv/pool op): x [B, H, N, d] on `grid`.
at::Tensor ref_pool(const at::Tensor& x, const PoolingAttentionOptions& o, const std::vector<std::int64_t>& stride,
                    const at::Tensor& weight, const at::Tensor& nw, const at::Tensor& nb) {
  const std::size_t A = o.grid.size();
  const auto kernel = axes(o.kernel, A), s = axes(stride, A);
  bool active = false;
  for (std::size_t a = 0; a < A; ++a) active = active || kernel[a] > 1 || s[a] > 1;
  if (!active) return x;
  const std::int64_t B = x.size(0), H = x.size(1), d = x.size(3), cls = o.cls_token ? 1 : 0;
  const std::int64_t gh = o.grid[0], gw = A == 2 ? o.grid[1] : 1;
  const std::int64_t kh = kernel[0], kw = A == 2 ? kernel[1] : 1, sh = s[0], sw = A == 2 ? s[1] : 1;
  const std::int64_t ph = kh / 2, pw = kw / 2;
  const std::int64_t oh = (gh + 2 * ph - kh) / sh + 1, ow = (gw + 2 * pw - kw) / sw + 1;
  at::Tensor body = x.narrow(2, cls, x.size(2) - cls).reshape({B, H, gh, gw, d});
  const double fill = o.mode == PoolMode::Max ? -std::numeric_limits<double>::infinity() : 0.0;
  at::Tensor padded = at::full({B, H, gh + 2 * ph, gw + 2 * pw, d}, fill, x.options());
  padded = padded.slice_scatter(padded.narrow(2, ph, gh).slice_scatter(body, 3, pw, pw + gw), 2, ph, ph + gh);
  at::Tensor acc;
  for (std::int64_t u = 0; u < kh; ++u)
    for (std::int64_t t = 0; t < kw; ++t) {
      const at::Tensor win = padded.slice(2, u, u + sh * (oh - 1) + 1, sh).slice(3, t, t + sw * (ow - 1) + 1, sw);
      at::Tensor term;
      if (o.mode == PoolMode::Conv) term = win * (A == 2 ? weight.select(1, 0).select(1, u).select(1, t)
                                                         : weight.select(1, 0).select(1, u));
      else term = win;
      if (!acc.defined()) acc = term;
      else acc = o.mode == PoolMode::Max ? at::maximum(acc, term) : acc + term;
    }
  if (o.mode == PoolMode::Avg) acc = acc / static_cast<double>(kh * kw);
  at::Tensor out = acc.reshape({B, H, oh * ow, d});
  if (cls) out = at::cat({x.narrow(2, 0, 1), out}, 2);
  if (o.mode == PoolMode::Conv) {
    const at::Tensor mean = out.mean(-1, true);
    const at::Tensor var = (out - mean).pow(2).mean(-1, true);
    out = (out - mean) / (var + 1e-6).sqrt() * nw + nb;
  }
  return out;
}

// MViT v2's rel-pos index for one axis, written from the paper's formula.
std::int64_t rel_index(std::int64_t i, std::int64_t j, std::int64_t qs, std::int64_t ks) {
  const double qr = std::max(double(ks) / qs, 1.0), kr = std::max(double(qs) / ks, 1.0);
  return static_cast<std::int64_t>(std::floor(i * qr - j * kr + (ks - 1) * kr));
}

struct Reference {
  PoolingAttentionOptions o;
  std::map<std::string, at::Tensor> p;  // parameters in float64
  std::vector<std::int64_t> qg, kg;

  at::Tensor operator()(const at::Tensor& qin, const at::Tensor& kin, const at::Tensor& vin) const {
    auto param = [&](const std::string& n) { return p.count(n) ? p.at(n) : at::Tensor(); };
    const at::Tensor q = ref_pool(qin, o, o.stride_q, param("pool_q"), param("norm_q_weight"), param("norm_q_bias"));
    const at::Tensor k = ref_pool(kin, o, o.stride_kv, param("pool_k"), param("norm_k_weight"), param("norm_k_bias"));
    const at::Tensor v = ref_pool(vin, o, o.stride_kv, param("pool_v"), param("norm_v_weight"), param("norm_v_bias"));
    const std::int64_t cls = o.cls_token ? 1 : 0, d = o.head_dim;
    at::Tensor attn = at::matmul(q, k.transpose(-2, -1)) / std::sqrt(double(d));
    if (o.rel_pos) {
      const std::int64_t nq = q.size(2) - cls, nk = k.size(2) - cls;
      const std::int64_t qw = qg.size() == 2 ? qg[1] : 1, kw = kg.size() == 2 ? kg[1] : 1;
      // Table rows per (query, key) pair, from the formula, then gathered: [nq, nk, d].
      auto axis_index = [&](std::int64_t qs, std::int64_t ks) {
        at::Tensor idx = at::empty({qs, ks}, at::kLong);
        auto acc = idx.accessor<std::int64_t, 2>();
        for (std::int64_t i = 0; i < qs; ++i)
          for (std::int64_t j = 0; j < ks; ++j) acc[i][j] = rel_index(i, j, qs, ks);
        return idx;
      };
      const at::Tensor qi = at::arange(nq, at::kLong), kj = at::arange(nk, at::kLong);
      const at::Tensor ih = axis_index(qg[0], kg[0]).index({qi.div(qw, "floor").view({nq, 1}), kj.div(kw, "floor").view({1, nk})});
      at::Tensor E = p.at("rel_pos_h").index_select(0, ih.reshape(-1)).view({nq, nk, d});
      if (qg.size() == 2) {
        const at::Tensor iw = axis_index(qg[1], kg[1]).index({qi.remainder(qw).view({nq, 1}), kj.remainder(kw).view({1, nk})});
        E = E + p.at("rel_pos_w").index_select(0, iw.reshape(-1)).view({nq, nk, d});
      }
      const at::Tensor rel = at::einsum("bnic,ijc->bnij", {q.narrow(2, cls, nq), E});
      attn = attn + at::constant_pad_nd(rel, {cls, 0, cls, 0}, 0);
    }
    at::Tensor out = at::matmul(at::softmax(attn, -1), v);
    if (o.residual_pooling)
      out = out + (cls ? at::constant_pad_nd(q.narrow(2, 1, q.size(2) - 1), {0, 0, 1, 0}, 0) : q);
    return out;
  }
};

void check(PoolingAttentionOptions o, std::int64_t B) {
  SCOPED_TRACE("grid " + std::to_string(o.grid[0]) + " mode " + std::to_string(static_cast<int>(o.mode)));
  PoolingAttention module(o);
  std::int64_t N = o.cls_token ? 1 : 0;
  N += o.grid.size() == 2 ? o.grid[0] * o.grid[1] : o.grid[0];
  Reference ref{o, {}, module.q_grid(), module.kv_grid()};
  for (const auto& item : module.named_parameters()) {
    // Non-trivial norm parameters, so the reference's use of them is checked too.
    if (item.key().find("norm_") == 0) {
      at::NoGradGuard guard;
      item.value().add_(at::randn(item.value().sizes()) * 0.3);
    }
    ref.p[item.key()] = item.value().detach().to(at::kDouble);
  }
  module.to(test_device());
  const auto in = random_qkv(B, o.heads, N, o.head_dim);
  expect_matches([&](auto& q, auto& k, auto& v) { return module.forward(q, k, v).out; },
                 [&](auto& q, auto& k, auto& v) { return ref(q, k, v); }, in.q, in.k, in.v);
}

TEST(AttentionPooling, OneDimensionalGrids) {
  at::manual_seed(50);
  PoolingAttentionOptions o;
  o.heads = 2;
  o.head_dim = 8;
  o.grid = {20};
  o.stride_q = {2};
  o.stride_kv = {4};
  for (const auto mode : {PoolMode::Conv, PoolMode::Max, PoolMode::Avg}) {
    o.mode = mode;
    check(o, 2);
  }
  o.mode = PoolMode::Conv;
  o.rel_pos = false;
  o.residual_pooling = false;
  o.stride_q = {1};
  check(o, 1);
}

TEST(AttentionPooling, LongOneDimensionalGridInChunks) {
  // Large enough that the relative-position term is formed in several chunks of query rows.
  at::manual_seed(52);
  PoolingAttentionOptions o;
  o.heads = 2;
  o.head_dim = 8;
  o.grid = {1536};
  o.stride_kv = {4};  // residue-class path
  check(o, 1);
  o.stride_kv = {5};  // table-product path (1536 is no multiple of 308)
  check(o, 1);
}

TEST(AttentionPooling, TwoDimensionalGrids) {
  at::manual_seed(51);
  PoolingAttentionOptions o;
  o.heads = 2;
  o.head_dim = 8;
  o.grid = {6, 5};  // odd width: the pooled sizes round up
  o.mode = PoolMode::Max;
  o.stride_q = {1};
  o.stride_kv = {2};
  check(o, 2);
  o.grid = {4, 4};
  o.mode = PoolMode::Avg;
  o.stride_q = {2};
  o.cls_token = true;
  check(o, 1);
  o.grid = {6, 4};
  o.mode = PoolMode::Conv;
  o.stride_q = {2, 1};
  o.stride_kv = {1, 2};
  check(o, 2);
}

TEST(AttentionPooling, OutputFollowsThePooledQueryGrid) {
  PoolingAttentionOptions o;
  o.heads = 1;
  o.head_dim = 4;
  o.grid = {8, 8};
  o.stride_q = {2};
  o.stride_kv = {4};
  PoolingAttention m(o);
  EXPECT_EQ(m.q_grid(), (std::vector<std::int64_t>{4, 4}));
  EXPECT_EQ(m.kv_grid(), (std::vector<std::int64_t>{2, 2}));
  // Tables 2*max(q, kv)-1 = 7 rows per axis.
  EXPECT_EQ(m.named_parameters()["rel_pos_h"].size(0), 7);
  const auto in = random_qkv(1, 1, 64, 4);
  const auto res = m.forward(in.q.to(at::kFloat), in.k.to(at::kFloat), in.v.to(at::kFloat));
  EXPECT_EQ(res.out.sizes(), (at::IntArrayRef{1, 1, 16, 4}));
  EXPECT_EQ(m.score_elements(1), 16 * 4);
  EXPECT_EQ(pooling_score_elements(1, o), 16 * 4);
}

}  // namespace
}  // namespace lrb
