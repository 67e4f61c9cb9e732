#include "suite/nn/attention/pooling.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "suite/core/errors.h"
#include "suite/core/seeds.h"
#include "suite/nn/attention/common.h"
#include "suite/nn/attention/kernel_registry.h"
#include "suite/nn/batched_matmul.h"
#include "suite/nn/cpu/layer_norm.h"
#include "suite/nn/fp32_cpu_conv.h"

namespace lrb {
namespace {

constexpr const char* kName = "pooling";

std::vector<std::int64_t> per_axis(const std::vector<std::int64_t>& v, std::size_t axes, const char* what) {
  if (v.size() == axes) return v;
  if (v.size() == 1) return std::vector<std::int64_t>(axes, v[0]);
  throw UserError(std::string(kName) + ": " + what + " needs 1 or " + std::to_string(axes) + " values");
}

std::int64_t product(const std::vector<std::int64_t>& v) {
  std::int64_t p = 1;
  for (auto x : v) p *= x;
  return p;
}

}  // namespace

PoolMode parse_pool_mode(const std::string& name) {
  if (name == "conv") return PoolMode::Conv;
  if (name == "max") return PoolMode::Max;
  if (name == "avg") return PoolMode::Avg;
  throw UserError(std::string(kName) + ": unknown pooling mode '" + name + "'; use conv, max or avg");
}

std::vector<std::int64_t> pooled_grid(const std::vector<std::int64_t>& grid, const std::vector<std::int64_t>& kernel,
                                      const std::vector<std::int64_t>& stride) {
  std::vector<std::int64_t> out(grid.size());
  for (std::size_t a = 0; a < grid.size(); ++a) {
    if (kernel[a] == 1 && stride[a] == 1) {
      out[a] = grid[a];
      continue;
    }
    out[a] = (grid[a] + 2 * (kernel[a] / 2) - kernel[a]) / stride[a] + 1;
  }
  return out;
}

PoolingAttention::PoolingAttention(PoolingAttentionOptions options) : options_(std::move(options)) {
  const auto& o = options_;
  if (o.grid.empty() || o.grid.size() > 2) throw UserError(std::string(kName) + ": grid must be [T] or [H, W]");
  for (auto g : o.grid)
    if (g < 1) throw UserError(std::string(kName) + ": grid sizes must be >= 1");
  if (o.heads < 1 || o.head_dim < 1) throw UserError(std::string(kName) + ": heads and head_dim must be >= 1");
  const std::size_t axes = o.grid.size();
  const auto kernel = per_axis(o.kernel, axes, "kernel");
  const auto kernel_q = o.kernel_q.empty() ? kernel : per_axis(o.kernel_q, axes, "kernel_q");
  const auto sq = per_axis(o.stride_q, axes, "stride_q");
  const auto skv = per_axis(o.stride_kv, axes, "stride_kv");
  for (std::size_t a = 0; a < axes; ++a)
    if (kernel[a] < 1 || kernel_q[a] < 1 || sq[a] < 1 || skv[a] < 1 || kernel[a] > o.grid[a] + 2 * (kernel[a] / 2) ||
        kernel_q[a] > o.grid[a] + 2 * (kernel_q[a] / 2))
      throw UserError(std::string(kName) + ": kernels and strides must be >= 1 and the kernels must fit the grid");
  q_grid_ = pooled_grid(o.grid, kernel_q, sq);
  kv_grid_ = pooled_grid(o.grid, kernel, skv);
  Rng seeds(o.seed);
  pool_q_ = make_pool("q", kernel_q, sq, seeds.next());
  pool_k_ = make_pool("k", kernel, skv, seeds.next());
  pool_v_ = make_pool("v", kernel, skv, seeds.next());
  if (o.rel_pos) {
    auto gen = at::make_generator<at::CPUGeneratorImpl>(seeds.next());
    for (std::size_t a = 0; a < axes; ++a) {
      const std::int64_t qs = q_grid_[a], ks = kv_grid_[a];
      // MViT v2 sizes the tables from input_size // stride; we use the pooled sizes, which
      // agree for even grids and stay in range for odd ones.
      const std::int64_t rows = 2 * std::max(qs, ks) - 1;
      at::Tensor table = at::empty({rows, o.head_dim}, at::kFloat).normal_(0, 0.02, gen).clamp_(-0.04, 0.04);
      rel_tables_.push_back(register_parameter(a == 0 ? "rel_pos_h" : "rel_pos_w", table));
      const double q_ratio = std::max(static_cast<double>(ks) / qs, 1.0);
      const double k_ratio = std::max(static_cast<double>(qs) / ks, 1.0);
      at::Tensor index = at::empty({qs, ks}, at::kLong);
      auto acc = index.accessor<std::int64_t, 2>();
      for (std::int64_t i = 0; i < qs; ++i)
        for (std::int64_t j = 0; j < ks; ++j)
          acc[i][j] = static_cast<std::int64_t>(i * q_ratio - j * k_ratio + (ks - 1) * k_ratio);
      rel_index_.push_back(index);
      // Integer k/v-to-q pooling ratio: the residue-class product of axis_logits applies.
      residue_.push_back(q_ratio == 1.0 && qs % ks == 0 ? qs / ks : 1);
    }
  }
}

PoolingAttention::Pool PoolingAttention::make_pool(const std::string& name, const std::vector<std::int64_t>& kernel,
                                                   const std::vector<std::int64_t>& stride, std::uint64_t seed) {
  const auto& o = options_;
  Pool p;
  p.kernel = kernel;
  p.stride = stride;
  for (auto k : p.kernel) p.padding.push_back(k / 2);
  p.active = false;
  for (std::size_t a = 0; a < p.kernel.size(); ++a) p.active = p.active || p.kernel[a] > 1 || p.stride[a] > 1;
  if (!p.active || o.mode != PoolMode::Conv) return p;
  // Depthwise conv over head_dim channels shared by the heads (MViT's "conv" mode), with
  // torch's default init (kaiming uniform, a = sqrt(5): bound 1/sqrt(fan_in)).
  std::vector<std::int64_t> shape{o.head_dim, 1};
  shape.insert(shape.end(), p.kernel.begin(), p.kernel.end());
  const double bound = 1.0 / std::sqrt(static_cast<double>(product(p.kernel)));
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  p.weight = register_parameter("pool_" + name, at::empty(shape, at::kFloat).uniform_(-bound, bound, gen));
  p.norm_weight = register_parameter("norm_" + name + "_weight", at::ones({o.head_dim}, at::kFloat));
  p.norm_bias = register_parameter("norm_" + name + "_bias", at::zeros({o.head_dim}, at::kFloat));
  return p;
}

at::Tensor PoolingAttention::pool_mask(const Pool& p, const at::Tensor& keep) const {
  // keep [B, cls + N] -> [B, cls + N']: pooled position i is real when the position its
  // window is centred on, stride * i per axis, is real (beyond the grid: padding).
  const auto& o = options_;
  const std::int64_t B = keep.size(0), cls = o.cls_token ? 1 : 0;
  const auto out = pooled_grid(o.grid, p.kernel, p.stride);
  std::vector<std::int64_t> shape{B};
  shape.insert(shape.end(), o.grid.begin(), o.grid.end());
  at::Tensor centres = keep.narrow(1, cls, keep.size(1) - cls).reshape(shape);
  for (std::size_t a = 0; a < o.grid.size(); ++a) {
    const auto dim = static_cast<std::int64_t>(a) + 1;
    centres = centres.slice(dim, 0, o.grid[a], p.stride[a]);
    if (centres.size(dim) < out[a]) {  // an even kernel's last window is centred past the end
      std::vector<std::int64_t> pad(2 * o.grid.size(), 0);
      pad[2 * (o.grid.size() - 1 - a) + 1] = out[a] - centres.size(dim);
      centres = at::constant_pad_nd(centres.to(at::kByte), pad, 0).to(at::kBool);
    } else {
      centres = centres.narrow(dim, 0, out[a]);
    }
  }
  const at::Tensor pooled = centres.reshape({B, -1});
  return cls ? at::cat({keep.narrow(1, 0, 1), pooled}, 1) : pooled;
}

PoolingAttention::Pooled PoolingAttention::apply_pool(const Pool& p, const at::Tensor& x, const at::Tensor& keep) const {
  if (!p.active) return {x, keep};
  const auto& o = options_;
  const std::int64_t B = x.size(0), H = x.size(1), d = x.size(3);
  const std::int64_t cls = o.cls_token ? 1 : 0;
  // Without a class token x itself: even a whole-length narrow sends back a zero-filled
  // gradient plus a copy.
  at::Tensor body = cls ? x.narrow(2, cls, x.size(2) - cls) : x;
  at::Tensor pooled_keep;
  if (keep.defined()) {
    // Padded positions are the grid's border to the pooling: zero, or nothing for max.
    const at::Tensor pad = keep.narrow(1, cls, keep.size(1) - cls).logical_not().view({B, 1, -1, 1});
    body = body.masked_fill(pad, o.mode == PoolMode::Max ? -std::numeric_limits<double>::infinity() : 0.0);
    pooled_keep = pool_mask(p, keep);
  }
  std::vector<std::int64_t> shape{B * H};
  shape.insert(shape.end(), o.grid.begin(), o.grid.end());
  shape.push_back(d);
  // [B*H, *grid, d] -> channels first for the pooling ops.
  at::Tensor y = body.reshape(shape);
  y = o.grid.size() == 1 ? y.permute({0, 2, 1}) : y.permute({0, 3, 1, 2});
  const bool two_d = o.grid.size() == 2;
  switch (o.mode) {
    case PoolMode::Conv: {
      const Fp32CpuConvScope fp32_conv(y);  // LibTorch's bf16 CPU convolution: fp32_cpu_conv.h
      y = two_d ? at::conv2d(y, p.weight, {}, p.stride, p.padding, {1, 1}, d)
                : at::conv1d(y, p.weight, {}, p.stride, p.padding, {1}, d);
      break;
    }
    case PoolMode::Max:
      y = two_d ? at::max_pool2d(y, p.kernel, p.stride, p.padding) : at::max_pool1d(y, p.kernel, p.stride, p.padding);
      break;
    case PoolMode::Avg:
      // On CUDA the permuted y is channels-last, whose avg_pool2d backward ignores the padding
      // and returns wrong gradients without an error (PyTorch issue 188344; seen in 2.11 on an
      // H200 by this project's kernel tests): pool a contiguous copy there.
      if (y.is_cuda()) y = y.contiguous();
      y = two_d ? at::avg_pool2d(y, p.kernel, p.stride, p.padding) : at::avg_pool1d(y, p.kernel, p.stride, p.padding);
      break;
  }
  y = two_d ? y.permute({0, 2, 3, 1}) : y.permute({0, 2, 1});
  at::Tensor out = y.reshape({B, H, -1, d});
  // A pooled position centred on padding is not a token (and under max pooling a window of
  // padding alone would be -inf).
  if (pooled_keep.defined())
    out = out.masked_fill(pooled_keep.narrow(1, cls, pooled_keep.size(1) - cls).logical_not().view({B, 1, -1, 1}), 0.0);
  if (cls) out = at::cat({x.narrow(2, 0, 1), out}, 2);
  if (o.mode == PoolMode::Conv) out = layer_norm(out, p.norm_weight, p.norm_bias, 1e-6);
  return {out, pooled_keep};
}

at::Tensor PoolingAttention::pool(const at::Tensor& x, char which, const at::Tensor& mask) const {
  const at::Tensor keep = check_key_mask(mask, x.size(0), x.size(2), x, kName);
  switch (which) {
    case 'q': return apply_pool(pool_q_, x, keep).x;
    case 'k': return apply_pool(pool_k_, x, keep).x;
    case 'v': return apply_pool(pool_v_, x, keep).x;
  }
  throw UserError(std::string(kName) + ": pool() takes 'q', 'k' or 'v'");
}

PoolingAttentionOutput PoolingAttention::forward(const at::Tensor& q_in, const at::Tensor& k_in,
                                                 const at::Tensor& v_in, const at::Tensor& mask) {
  check_qkv(q_in, k_in, v_in, kName);
  const auto& o = options_;
  const std::int64_t cls = o.cls_token ? 1 : 0;
  const std::int64_t tokens = product(o.grid) + cls;
  if (q_in.size(1) != o.heads || q_in.size(3) != o.head_dim || v_in.size(3) != o.head_dim)
    throw UserError(std::string(kName) + ": q, k, v must have " + std::to_string(o.heads) + " heads of dim " +
                    std::to_string(o.head_dim));
  if (q_in.size(2) != tokens || k_in.size(2) != tokens)
    throw UserError(std::string(kName) + ": the grid holds " + std::to_string(tokens) + " tokens; got " +
                    std::to_string(q_in.size(2)));
  const at::Tensor keep = check_key_mask(mask, q_in.size(0), tokens, q_in, kName);
  const Pooled pq = apply_pool(pool_q_, q_in, keep), pk = apply_pool(pool_k_, k_in, keep);
  const at::Tensor q = pq.x, k = pk.x, v = apply_pool(pool_v_, v_in, keep).x;
  const std::int64_t B = q.size(0), Nq = q.size(2), Nkv = k.size(2), d = o.head_dim;
  at::Tensor attn = batched_matmul(q * resolve_scale(o.scale, d), k.transpose(-2, -1));
  if (o.rel_pos) add_rel_pos(attn, cls ? q.narrow(2, cls, Nq - cls) : q);
  if (pk.keep.defined())
    attn = attn.masked_fill(pk.keep.logical_not().view({B, 1, 1, Nkv}), -std::numeric_limits<double>::infinity());
  at::Tensor out = batched_matmul(at::softmax(attn, -1), v);
  if (o.residual_pooling) {
    out = cls ? out + at::constant_pad_nd(q.narrow(2, 1, Nq - 1), {0, 0, 1, 0}, 0) : out + q;
  }
  return {out, q_grid_, pq.keep};
}

at::Tensor PoolingAttention::axis_logits(const at::Tensor& x, std::size_t a, std::int64_t y0) const {
  // x [..., n, d]: q rows y0..y0+n-1 along axis a. Returns [..., n, kv_a] with
  // q_y . R_a[idx(y, j)] = (q_y R_a^T)[idx(y, j)]: a product with the table, then a gather.
  const std::int64_t n = x.size(-2), d = x.size(-1), ks = kv_grid_[a];
  const at::Tensor& table = rel_tables_[a];
  const std::int64_t K = residue_[a];
  if (K <= 1) {
    const at::Tensor index = rel_index_[a].to(x.device()).narrow(0, y0, n);
    std::vector<std::int64_t> shape(x.sizes().begin(), x.sizes().end());
    LRB_CHECK(shape.size() >= 2, "axis_logits reads x as [..., n, d]");
    shape.back() = ks;
    std::vector<std::int64_t> view(shape.size(), 1);
    view[view.size() - 2] = n;
    view.back() = ks;
    return at::matmul(x, table.t()).gather(-1, index.view(view).expand(shape));
  }
  // k and v pooled K times more than q: idx(y, j) = y + K*(ks-1-j), so query y = a*K + c
  // only uses table rows of residue c. Per residue class, queries times those rows
  // (2*ks of them) cost 2x the scores, where the whole table (2*K*ks rows) costs 2K x.
  const std::int64_t outer = x.numel() / (n * d), m = 2 * ks, na = n / K;
  const at::Tensor padded = at::constant_pad_nd(table, {0, 0, 0, K * m - table.size(0)}, 0);
  const at::Tensor classes = padded.view({m, K, d}).permute({1, 2, 0});  // [K, d, m]: R[t*K + c]
  const at::Tensor xc = x.reshape({outer, na, K, d}).permute({2, 0, 1, 3}).reshape({K, outer * na, d});
  const at::Tensor prod = batched_matmul(xc, classes).view({K, outer, na, m});
  const auto lopts = at::TensorOptions().dtype(at::kLong).device(x.device());
  const at::Tensor rows = at::arange(y0 / K, y0 / K + na, lopts).view({na, 1}) + (ks - 1) -
                          at::arange(ks, lopts).view({1, ks});  // [na, ks]
  const at::Tensor picked = prod.gather(-1, rows.view({1, 1, na, ks}).expand({K, outer, na, ks}));
  std::vector<std::int64_t> shape(x.sizes().begin(), x.sizes().end());
  shape.back() = ks;
  return picked.permute({1, 2, 0, 3}).reshape(shape);
}

void PoolingAttention::add_rel_pos(at::Tensor& attn, const at::Tensor& qs) const {
  // Decomposed relative position with unscaled q. On a long 1-D grid the per-axis term is
  // as big as the scores and its table product bigger, so query rows go a chunk at a time
  // (table products under 1/8 of the scores, or 2^22 elements); no [Nq, Nkv, d] tensor of
  // gathered table rows is ever formed. The chunks are concatenated and added once: an
  // in-place add per chunk into a view of the logits would make autograd copy the whole
  // logit gradient once per chunk in the backward.
  const std::int64_t cls = options_.cls_token ? 1 : 0;
  const std::int64_t B = qs.size(0), H = qs.size(1), d = qs.size(3);
  const bool two_d = q_grid_.size() == 2;
  const std::int64_t qh = q_grid_[0], qw = two_d ? q_grid_[1] : 1;
  const std::int64_t kh = kv_grid_[0], kw = two_d ? kv_grid_[1] : 1;
  const at::Tensor q4 = qs.reshape({B, H, qh, qw, d});
  const std::int64_t per_row = B * H * qw * (2 * rel_tables_[0].size(0) + (two_d ? rel_tables_[1].size(0) : 0));
  const std::int64_t budget = std::max<std::int64_t>(std::int64_t{1} << 22, attn.numel() / 8);
  const std::int64_t step = std::max<std::int64_t>(1, residue_[0]);  // residue classes need whole groups
  std::int64_t chunk = std::clamp<std::int64_t>(budget / std::max<std::int64_t>(1, per_row), 1, qh);
  chunk = std::max(step, chunk / step * step);
  std::vector<at::Tensor> parts;
  for (std::int64_t y0 = 0; y0 < qh; y0 += chunk) {
    const std::int64_t n = std::min(chunk, qh - y0);
    const at::Tensor q_part = q4.narrow(2, y0, n);  // [B, H, n, qw, d]
    at::Tensor rel = axis_logits(q_part.transpose(2, 3), 0, y0).transpose(2, 3).unsqueeze(-1);  // [.., kh, 1]
    if (two_d) rel = rel + axis_logits(q_part, 1, 0).unsqueeze(-2);                              // [.., kh, kw]
    parts.push_back(rel.reshape({B, H, n * qw, kh * kw}));
  }
  at::Tensor rel = parts.size() == 1 ? parts[0] : at::cat(parts, 2);
  parts.clear();
  if (cls) rel = at::constant_pad_nd(rel, {1, 0, 1, 0}, 0);
  attn = attn + rel;
}

std::int64_t PoolingAttention::score_elements(std::int64_t batch) const {
  const std::int64_t cls = options_.cls_token ? 1 : 0;
  return batch * options_.heads * (product(q_grid_) + cls) * (product(kv_grid_) + cls);
}

std::int64_t pooling_score_elements(std::int64_t batch, const PoolingAttentionOptions& o) {
  const std::size_t axes = o.grid.size();
  const auto kernel = per_axis(o.kernel, axes, "kernel");
  const auto kernel_q = o.kernel_q.empty() ? kernel : per_axis(o.kernel_q, axes, "kernel_q");
  const std::int64_t cls = o.cls_token ? 1 : 0;
  const auto qg = pooled_grid(o.grid, kernel_q, per_axis(o.stride_q, axes, "stride_q"));
  const auto kg = pooled_grid(o.grid, kernel, per_axis(o.stride_kv, axes, "stride_kv"));
  return batch * o.heads * (product(qg) + cls) * (product(kg) + cls);
}

namespace {

// `lrbench attend --kernel pooling`: its options and how it runs on q, k, v.
AttentionKernel pooling_kernel() {
  using namespace kernel_spec;
  return {"pooling",
          "MViT pooling attention (pooled q, k, v; v2 relative position and residual pooling; padded keys masked)",
          {{string_opt("mode", "conv", {"conv", "max", "avg"}, "pooling: depthwise conv + LayerNorm, max or avg"),
            int_list_opt("grid", {}, "token grid [T] or [H, W]; empty: a 1-D grid of N tokens"),
            int_list_opt("kernel", {3}, "pooling kernel per axis (one value: every axis)"),
            int_list_opt("kernel_q", {}, "q's pooling kernel per axis; empty: kernel (1 with stride_q 1: q not pooled, as MViT v1's unstrided blocks)"),
            int_list_opt("stride_q", {1}, "q stride per axis (downsamples the output)"),
            int_list_opt("stride_kv", {1}, "k and v stride per axis (cheaper attention)"),
            bool_opt("rel_pos", true, "MViT v2 decomposed relative position"),
            bool_opt("residual_pooling", true, "MViT v2 residual pooling connection (+ pooled q)"),
            bool_opt("cls_token", false, "the first token is a class token (not pooled)"),
            int_opt("seed", 0, "initialisation of the pooling and relative-position parameters"),
            scale_opt()}},
          {"mask"},
          [](const json& o, const AttentionTensors& in) {
            reject(in, "pooling", true, false, false);
            PoolingAttentionOptions po;
            po.heads = in.q.size(1);
            po.head_dim = in.q.size(3);
            po.mode = parse_pool_mode(o.at("mode").get<std::string>());
            po.cls_token = o.at("cls_token").get<bool>();
            po.grid = int_list(o.at("grid"));
            if (po.grid.empty()) po.grid = {in.q.size(2) - (po.cls_token ? 1 : 0)};
            po.kernel = int_list(o.at("kernel"));
            po.kernel_q = int_list(o.at("kernel_q"));
            po.stride_q = int_list(o.at("stride_q"));
            po.stride_kv = int_list(o.at("stride_kv"));
            po.rel_pos = o.at("rel_pos").get<bool>();
            po.residual_pooling = o.at("residual_pooling").get<bool>();
            po.seed = static_cast<std::uint64_t>(o.at("seed").get<std::int64_t>());
            po.scale = o.at("scale").get<double>();
            PoolingAttention module(po);
            module.to(in.q.device(), in.q.scalar_type());
            auto res = module.forward(in.q, in.k, in.v, in.mask);
            AttentionRun r;
            r.out = res.out;
            r.info["grid"] = res.grid;
            r.score_elements = module.score_elements(in.q.size(0));
            return r;
          }};
}

}  // namespace

LRB_REGISTER_ATTENTION_KERNEL(50, pooling_kernel());

}  // namespace lrb
