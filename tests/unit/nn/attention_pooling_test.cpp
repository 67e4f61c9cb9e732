#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tests/support/attention_test_util.h"
#include "suite/nn/attention/pooling.h"

namespace lrb {
namespace {

using namespace lrb::test;

std::vector<std::int64_t> axes(const std::vector<std::int64_t>& v, std::size_t n) {
  return v.size() == n ? v : std::vector<std::int64_t>(n, v[0]);
}

// A pooled tensor and, with a padding mask, which pooled positions are real.
struct RefPooled {
  at::Tensor x, keep;
};

// Pooling written out with strided slices (no conv/pool op): x [B, H, N, d] on `grid`.
// With keep ([B, N] bool), padded positions count as the border (0, or -inf for max), a
// pooled position is real when its window's centre is real, and the others are zero.
RefPooled ref_pool(const at::Tensor& x, const PoolingAttentionOptions& o, const std::vector<std::int64_t>& kernel_in,
                   const std::vector<std::int64_t>& stride, const at::Tensor& weight, const at::Tensor& nw,
                   const at::Tensor& nb, const at::Tensor& keep = {}) {
  const std::size_t A = o.grid.size();
  const auto kernel = axes(kernel_in, A), s = axes(stride, A);
  bool active = false;
  for (std::size_t a = 0; a < A; ++a) active = active || kernel[a] > 1 || s[a] > 1;
  if (!active) return {x, keep};
  const std::int64_t B = x.size(0), H = x.size(1), d = x.size(3), cls = o.cls_token ? 1 : 0;
  const std::int64_t gh = o.grid[0], gw = A == 2 ? o.grid[1] : 1;
  const std::int64_t kh = kernel[0], kw = A == 2 ? kernel[1] : 1, sh = s[0], sw = A == 2 ? s[1] : 1;
  const std::int64_t ph = kh / 2, pw = kw / 2;
  const std::int64_t oh = (gh + 2 * ph - kh) / sh + 1, ow = (gw + 2 * pw - kw) / sw + 1;
  const double fill = o.mode == PoolMode::Max ? -std::numeric_limits<double>::infinity() : 0.0;
  at::Tensor body = x.narrow(2, cls, x.size(2) - cls).reshape({B, H, gh, gw, d});
  at::Tensor body_keep;  // [B, 1, gh, gw, 1]
  if (keep.defined()) {
    body_keep = keep.narrow(1, cls, keep.size(1) - cls).reshape({B, 1, gh, gw, 1});
    body = at::where(body_keep, body, at::full({}, fill, x.options()));
  }
  auto place = [&](const at::Tensor& inner, const at::Tensor& outer) {
    return outer.slice_scatter(outer.narrow(2, ph, gh).slice_scatter(inner, 3, pw, pw + gw), 2, ph, ph + gh);
  };
  auto window = [&](const at::Tensor& t, std::int64_t u, std::int64_t v) {
    return t.slice(2, u, u + sh * (oh - 1) + 1, sh).slice(3, v, v + sw * (ow - 1) + 1, sw);
  };
  const at::Tensor padded = place(body, at::full({B, H, gh + 2 * ph, gw + 2 * pw, d}, fill, x.options()));
  const at::Tensor padded_keep =
      keep.defined() ? place(body_keep, at::zeros({B, 1, gh + 2 * ph, gw + 2 * pw, 1}, at::kBool)) : at::Tensor();
  at::Tensor acc;
  for (std::int64_t u = 0; u < kh; ++u)
    for (std::int64_t t = 0; t < kw; ++t) {
      const at::Tensor win = window(padded, u, t);
      at::Tensor term;
      if (o.mode == PoolMode::Conv) term = win * (A == 2 ? weight.select(1, 0).select(1, u).select(1, t)
                                                         : weight.select(1, 0).select(1, u));
      else term = win;
      if (!acc.defined()) acc = term;
      else acc = o.mode == PoolMode::Max ? at::maximum(acc, term) : acc + term;
    }
  if (o.mode == PoolMode::Avg) acc = acc / static_cast<double>(kh * kw);
  // Window (u, t) = (ph, pw) starts each output's window at its centre.
  const at::Tensor centre = padded_keep.defined() ? window(padded_keep, ph, pw) : at::Tensor();
  if (centre.defined()) acc = at::where(centre, acc, at::zeros({}, x.options()));
  at::Tensor out = acc.reshape({B, H, oh * ow, d});
  at::Tensor out_keep;
  if (centre.defined()) {
    out_keep = centre.reshape({B, oh * ow});
    if (cls) out_keep = at::cat({keep.narrow(1, 0, 1), out_keep}, 1);
  }
  if (cls) out = at::cat({x.narrow(2, 0, 1), out}, 2);
  if (o.mode == PoolMode::Conv) {
    const at::Tensor mean = out.mean(-1, true);
    const at::Tensor var = (out - mean).pow(2).mean(-1, true);
    out = (out - mean) / (var + 1e-6).sqrt() * nw + nb;
  }
  return {out, out_keep};
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

  // keep [B, cls + N] bool or undefined; query_keep receives the pooled queries' mask.
  at::Tensor operator()(const at::Tensor& qin, const at::Tensor& kin, const at::Tensor& vin, const at::Tensor& keep = {},
                        at::Tensor* query_keep = nullptr) const {
    auto param = [&](const std::string& n) { return p.count(n) ? p.at(n) : at::Tensor(); };
    const auto kernel_q = o.kernel_q.empty() ? o.kernel : o.kernel_q;
    const RefPooled pq = ref_pool(qin, o, kernel_q, o.stride_q, param("pool_q"), param("norm_q_weight"),
                                  param("norm_q_bias"), keep);
    const RefPooled pk = ref_pool(kin, o, o.kernel, o.stride_kv, param("pool_k"), param("norm_k_weight"),
                                  param("norm_k_bias"), keep);
    const at::Tensor q = pq.x, k = pk.x;
    const at::Tensor v =
        ref_pool(vin, o, o.kernel, o.stride_kv, param("pool_v"), param("norm_v_weight"), param("norm_v_bias"), keep).x;
    if (query_keep) *query_keep = pq.keep;
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
    if (pk.keep.defined()) attn = attn.masked_fill(pk.keep.logical_not().view({k.size(0), 1, 1, -1}), -1e30);
    at::Tensor out = at::matmul(at::softmax(attn, -1), v);
    if (o.residual_pooling)
      out = out + (cls ? at::constant_pad_nd(q.narrow(2, 1, q.size(2) - 1), {0, 0, 1, 0}, 0) : q);
    return out;
  }
};

void check(PoolingAttentionOptions o, std::int64_t B, const at::Tensor& mask = {}) {
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
  const at::Device device = test_device();
  module.to(device);
  const at::Tensor device_mask = mask.defined() ? mask.to(device) : mask;
  const auto in = random_qkv(B, o.heads, N, o.head_dim);
  at::Tensor query_keep;
  if (mask.defined()) {
    at::NoGradGuard no_grad;
    ref(in.q, in.k, in.v, mask, &query_keep);
    const PoolingAttentionOutput got = module.forward(in.q.to(device, at::kFloat), in.k.to(device, at::kFloat),
                                                      in.v.to(device, at::kFloat), device_mask);
    ASSERT_TRUE(got.keep.defined());
    EXPECT_TRUE(at::equal(got.keep.cpu(), query_keep)) << "pooled query mask";
    // Some pooled queries and keys are padding, some mix real and padded positions: the
    // rule is exercised, not only the mask's shape.
    EXPECT_FALSE(query_keep.all().item<bool>());
  }
  expect_matches([&](auto& q, auto& k, auto& v) { return module.forward(q, k, v, device_mask).out; },
                 [&](auto& q, auto& k, auto& v) { return ref(q, k, v, mask); }, in.q, in.k, in.v, query_keep);
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

TEST(AttentionPooling, PaddedPositionsAreMaskedAsKeys) {
  // Sequences ending in padding (1-D, with and without a class token) and scattered padding
  // on a 2-D grid, in every pooling mode: against the dense float64 reference of the rule
  // (pooling.h), outputs on real pooled queries and the gradients of q, k, v.
  at::manual_seed(53);
  PoolingAttentionOptions o;
  o.heads = 2;
  o.head_dim = 8;
  o.grid = {21};
  o.stride_q = {2};
  o.stride_kv = {4};
  for (const auto mode : {PoolMode::Conv, PoolMode::Max, PoolMode::Avg}) {
    o.mode = mode;
    o.cls_token = false;
    check(o, 2, length_mask({21, 9}, 21));
    o.cls_token = true;
    check(o, 2, length_mask({22, 8}, 22));
  }
  // An even kernel: the last window of an even-length grid is centred past its end.
  o.cls_token = false;
  o.rel_pos = false;
  o.grid = {20};
  o.kernel = {2};
  o.stride_q = {2};
  o.stride_kv = {2};
  check(o, 2, length_mask({20, 7}, 20));
  o.rel_pos = true;
  o.kernel = {3};
  o.grid = {6, 5};
  o.stride_q = {2};
  o.stride_kv = {2, 1};
  at::Tensor scattered = at::rand({2, 30}).gt(0.4);
  scattered[1].narrow(0, 5, 15).fill_(false);  // rows 1-3: windows centred on row 2 hold padding alone
  scattered.select(1, 0).fill_(true);
  for (const auto mode : {PoolMode::Conv, PoolMode::Max}) {
    o.mode = mode;
    check(o, 2, scattered);
  }
}

TEST(AttentionPooling, NothingAPaddedPositionHoldsReachesARealQuery) {
  at::manual_seed(54);
  PoolingAttentionOptions o;
  o.heads = 2;
  o.head_dim = 8;
  o.grid = {40};
  o.stride_q = {2};
  o.stride_kv = {4};
  o.cls_token = true;
  const at::Tensor mask = length_mask({41, 23}, 41);
  for (const auto mode : {PoolMode::Conv, PoolMode::Max, PoolMode::Avg}) {
    o.mode = mode;
    PoolingAttention module(o);
    const auto in = random_qkv(2, 2, 41, 8);
    const at::Tensor q = in.q.to(at::kFloat), k = in.k.to(at::kFloat), v = in.v.to(at::kFloat);
    const at::Tensor pad = mask.logical_not().view({2, 1, 41, 1});
    auto noisy = [&](const at::Tensor& x) { return at::where(pad, at::randn_like(x) * 100, x); };
    const PoolingAttentionOutput clean = module.forward(q, k, v, mask);
    const PoolingAttentionOutput noise = module.forward(noisy(q), noisy(k), noisy(v), mask);
    const at::Tensor real = clean.keep.view({2, 1, -1, 1}).expand_as(clean.out);
    EXPECT_TRUE(at::equal(clean.out.masked_select(real), noise.out.masked_select(real))) << static_cast<int>(mode);
    // Without the mask the padded keys are attended and the real queries change.
    const at::Tensor unmasked = module.forward(noisy(q), noisy(k), noisy(v)).out;
    EXPECT_FALSE(at::allclose(clean.out.masked_select(real), unmasked.masked_select(real)));
  }
}

TEST(AttentionPooling, KernelOneLeavesQueriesUnpooled) {
  // MViT v1 pools Q only where it is strided: kernel_q 1 and stride_q 1 leave q as it is,
  // with no pooling parameters, while k and v are still pooled.
  at::manual_seed(55);
  PoolingAttentionOptions o;
  o.heads = 2;
  o.head_dim = 8;
  o.grid = {16};
  o.kernel_q = {1};
  o.stride_kv = {2};
  o.rel_pos = false;
  o.residual_pooling = false;
  o.cls_token = true;
  PoolingAttention module(o);
  const auto params = module.named_parameters();
  EXPECT_FALSE(params.contains("pool_q"));
  EXPECT_FALSE(params.contains("norm_q_weight"));
  EXPECT_TRUE(params.contains("pool_k"));
  EXPECT_EQ(module.q_grid(), (std::vector<std::int64_t>{16}));
  const auto in = random_qkv(1, 2, 17, 8);
  EXPECT_TRUE(at::equal(module.pool(in.q.to(at::kFloat), 'q'), in.q.to(at::kFloat)));
  check(o, 2);
  check(o, 2, length_mask({17, 10}, 17));
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
