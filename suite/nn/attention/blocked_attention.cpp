#include "suite/nn/attention/blocked_attention.h"

#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <limits>

#include "suite/core/errors.h"
#include "suite/nn/batched_matmul.h"
#include "suite/nn/cpu/blocked_small_head.h"
#include "suite/nn/cpu/softmax_rows.h"

namespace lrb {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

constexpr double kInf = std::numeric_limits<double>::infinity();

class DenseLayout final : public KeyLayout {
 public:
  DenseLayout(std::int64_t blocks, std::int64_t block, std::int64_t keys, at::Tensor drop, at::Tensor bias)
      : blocks_(blocks), block_(block), keys_(keys) {
    if (drop.defined()) drop_ = drop.view({drop.size(0), 1, 1, 1, keys});
    if (bias.defined()) bias_ = bias.view({bias.size(0), 1, 1, 1, keys});
  }
  std::int64_t num_blocks() const override { return blocks_; }
  std::int64_t block_size() const override { return block_; }
  std::int64_t slots() const override { return keys_; }
  // All blocks share the keys: one block per group, so the keys are a view, never copied.
  std::int64_t max_group() const override { return 1; }
  at::Tensor gather(const at::Tensor& src, std::int64_t, std::int64_t) const override { return src.unsqueeze(2); }
  void scatter_add(at::Tensor& dsrc, const at::Tensor& grad, std::int64_t, std::int64_t) const override {
    dsrc.add_(grad.squeeze(2));
  }
  at::Tensor gradient_view(at::Tensor& dsrc, std::int64_t, std::int64_t) const override { return dsrc.unsqueeze(2); }
  at::Tensor drop_mask(std::int64_t, std::int64_t) const override { return drop_; }
  at::Tensor bias(std::int64_t, std::int64_t) const override { return bias_; }

 private:
  std::int64_t blocks_, block_, keys_;
  at::Tensor drop_, bias_;
};

// The bias added to a group's scores s [B, H, n, block, slots] and -inf where dropped.
void add_offsets(const KeyLayout& layout, at::Tensor& s, std::int64_t j0, std::int64_t n) {
  const at::Tensor bias = layout.bias(j0, n);
  if (bias.defined()) s.add_(bias);
  const at::Tensor drop = layout.drop_mask(j0, n);
  if (drop.defined()) s.masked_fill_(drop, -kInf);
}

// A group's scores s (q k^T, scaled) become its probabilities in place; lse_g gets each
// row's log-sum-exp (+inf for a row with every key dropped, whose probabilities are zeros).
void softmax_in_place(const KeyLayout& layout, at::Tensor& s, std::int64_t j0, std::int64_t n, at::Tensor lse_g) {
  if (softmax_rows_fused_applies(s))
    return softmax_rows_forward(s, layout.bias(j0, n), layout.drop_mask(j0, n), lse_g);
  add_offsets(layout, s, j0, n);
  at::Tensor m = s.amax(-1, /*keepdim=*/true);
  m.masked_fill_(m.eq(-kInf), 0);  // rows with every key dropped
  s.sub_(m).exp_();
  at::Tensor l = s.sum(-1, /*keepdim=*/true);
  const at::Tensor dead = l.eq(0);
  s.div_(l.masked_fill(dead, 1));
  // +inf makes the backward's exp(s - lse) vanish on dead rows.
  lse_g.copy_(m.add_(l.log_()).masked_fill_(dead, kInf));
}

// The backward's probabilities from a group's scores s and the forward's lse, in place.
void probabilities_again(const KeyLayout& layout, at::Tensor& s, std::int64_t j0, std::int64_t n,
                         const at::Tensor& lse_g) {
  if (softmax_rows_fused_applies(s))
    return softmax_rows_recompute(s, layout.bias(j0, n), layout.drop_mask(j0, n), lse_g);
  add_offsets(layout, s, j0, n);
  s.sub_(lse_g).exp_();
}

// dsrc += the key gradients a b of blocks [j0, j0 + n): added by BLAS into the layout's view of
// dsrc where it has one and the CPU product takes it (no temporary, no separate add pass),
// else a product scattered.
void add_key_gradients(const KeyLayout& layout, at::Tensor& dsrc, std::int64_t j0, std::int64_t n,
                       const at::Tensor& a, const at::Tensor& b) {
  at::Tensor view = layout.gradient_view(dsrc, j0, n);
  if (view.defined() && batched_matmul_accumulate_applies(view, a, b)) return batched_matmul_accumulate(view, a, b);
  layout.scatter_add(dsrc, batched_matmul(a, b), j0, n);
}

// The scores' gradient from the probabilities' gradient ds and p, in place: (ds - delta) * p.
void score_gradient(at::Tensor& ds, const at::Tensor& p, const at::Tensor& delta_g) {
  if (softmax_rows_fused_applies(ds) && softmax_rows_fused_applies(p))
    return softmax_rows_score_gradient(ds, p, delta_g);
  ds.sub_(delta_g).mul_(p);
}

// The group's additive score offsets for the fused path: the bias, -inf where dropped;
// broadcastable to [B, H, n, block, slots] (never expanded here).
at::Tensor group_offsets(const KeyLayout& layout, std::int64_t j0, std::int64_t n) {
  const at::Tensor bias = layout.bias(j0, n), drop = layout.drop_mask(j0, n);
  at::Tensor offsets = bias.defined() ? bias.to(at::kFloat) : at::zeros({1, 1, 1, 1, layout.slots()}, at::kFloat);
  return drop.defined() ? offsets.masked_fill(drop, -kInf) : offsets;
}

std::int64_t group_blocks(const KeyLayout& layout, std::int64_t batch_heads, std::int64_t budget) {
  const std::int64_t per_block = std::max<std::int64_t>(1, batch_heads * layout.block_size() * layout.slots());
  return std::clamp<std::int64_t>(budget / per_block, 1, std::max<std::int64_t>(1, layout.max_group()));
}

struct BlockedAttentionFunction : public torch::autograd::Function<BlockedAttentionFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                            const c10::intrusive_ptr<KeyLayout>& layout, double scale, std::int64_t budget) {
    const std::int64_t B = q.size(0), H = q.size(1), d = q.size(3), dv = v.size(3);
    const std::int64_t nb = layout->num_blocks(), bq = layout->block_size();
    const at::Tensor qs = (q * scale).view({B, H, nb, bq, d});
    at::Tensor out = at::empty({B, H, nb * bq, dv}, v.options());
    at::Tensor lse = at::empty({B, H, nb * bq, 1}, q.options());
    at::Tensor out5 = out.view({B, H, nb, bq, dv});
    at::Tensor lse5 = lse.view({B, H, nb, bq, 1});
    const std::int64_t G = group_blocks(*layout, B * H, budget);
    // CPU float32 heads of 8: each group in one fused pass (blocked_small_head.h).
    const bool fused = blocked_small_head_applies(q, k, v);
    for (std::int64_t j0 = 0; j0 < nb; j0 += G) {
      const std::int64_t n = std::min(G, nb - j0);
      if (fused) {
        at::Tensor out_g = out5.narrow(2, j0, n), lse_g = lse5.narrow(2, j0, n);
        blocked_small_head_forward(qs.narrow(2, j0, n), layout->gather(k, j0, n), layout->gather(v, j0, n),
                                   group_offsets(*layout, j0, n), out_g, lse_g);
        continue;
      }
      at::Tensor p = batched_matmul(qs.narrow(2, j0, n), layout->gather(k, j0, n).transpose(-2, -1));
      softmax_in_place(*layout, p, j0, n, lse5.narrow(2, j0, n));
      out5.narrow(2, j0, n).copy_(batched_matmul(p, layout->gather(v, j0, n)));
    }
    ctx->save_for_backward({qs, k, v, out, lse});
    ctx->saved_data["layout"] = at::IValue::make_capsule(layout);
    ctx->saved_data["scale"] = scale;
    ctx->saved_data["budget"] = budget;
    ctx->saved_data["fused"] = fused;
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &qs = saved[0], &k = saved[1], &v = saved[2], &out = saved[3], &lse = saved[4];
    const auto layout = c10::static_intrusive_pointer_cast<KeyLayout>(ctx->saved_data["layout"].toCapsule());
    const double scale = ctx->saved_data["scale"].toDouble();
    const std::int64_t budget = ctx->saved_data["budget"].toInt();
    const std::int64_t B = qs.size(0), H = qs.size(1), nb = qs.size(2), bq = qs.size(3), d = qs.size(4);
    const std::int64_t dv = v.size(3);
    const at::Tensor dout = grads[0].reshape({B, H, nb, bq, dv});
    const at::Tensor lse5 = lse.view({B, H, nb, bq, 1});
    // Row terms of the softmax backward: sum_j P_ij dP_ij = dO_i . O_i.
    const at::Tensor delta = (dout * out.view({B, H, nb, bq, dv})).sum(-1, /*keepdim=*/true);
    at::Tensor dq = at::empty({B, H, nb * bq, d}, qs.options());
    at::Tensor dq5 = dq.view({B, H, nb, bq, d});
    at::Tensor dk = at::zeros_like(k, at::MemoryFormat::Contiguous);
    at::Tensor dvs = at::zeros_like(v, at::MemoryFormat::Contiguous);
    const std::int64_t G = group_blocks(*layout, B * H, budget);
    const bool fused = ctx->saved_data["fused"].toBool();
    for (std::int64_t j0 = 0; j0 < nb; j0 += G) {
      const std::int64_t n = std::min(G, nb - j0);
      const at::Tensor kg = layout->gather(k, j0, n);
      const at::Tensor vg = layout->gather(v, j0, n);
      if (fused) {
        at::Tensor dq_g = dq5.narrow(2, j0, n), dkg, dvg;
        blocked_small_head_backward(qs.narrow(2, j0, n), kg, vg, group_offsets(*layout, j0, n),
                                    lse5.narrow(2, j0, n), delta.narrow(2, j0, n), dout.narrow(2, j0, n), scale, dq_g,
                                    dkg, dvg);
        layout->scatter_add(dvs, dvg, j0, n);
        layout->scatter_add(dk, dkg, j0, n);
        continue;
      }
      at::Tensor p = batched_matmul(qs.narrow(2, j0, n), kg.transpose(-2, -1));
      probabilities_again(*layout, p, j0, n, lse5.narrow(2, j0, n));
      const at::Tensor dog = dout.narrow(2, j0, n);
      add_key_gradients(*layout, dvs, j0, n, p.transpose(-2, -1), dog);
      at::Tensor ds = batched_matmul(dog, vg.transpose(-2, -1));
      score_gradient(ds, p, delta.narrow(2, j0, n));
      dq5.narrow(2, j0, n).copy_(batched_matmul(ds, kg).mul_(scale));
      add_key_gradients(*layout, dk, j0, n, ds.transpose(-2, -1), qs.narrow(2, j0, n));
    }
    return {dq, dk, dvs, at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

c10::intrusive_ptr<KeyLayout> make_dense_layout(std::int64_t num_blocks, std::int64_t block, std::int64_t keys,
                                                 const at::Tensor& key_drop, const at::Tensor& key_bias) {
  return c10::make_intrusive<DenseLayout>(num_blocks, block, keys, key_drop, key_bias);
}

at::Tensor blocked_attention(const at::Tensor& q, const at::Tensor& k_src, const at::Tensor& v_src,
                             const c10::intrusive_ptr<KeyLayout>& layout, double scale,
                             std::int64_t max_score_elements) {
  LRB_CHECK(q.dim() == 4 && k_src.dim() == 4 && v_src.dim() == 4, "blocked_attention takes [B, H, N, d]");
  LRB_CHECK(q.size(2) == layout->num_blocks() * layout->block_size(), "queries must fill the layout's blocks");
  RECORD_FUNCTION("lrb::blocked_attention", std::vector<c10::IValue>({q, k_src, v_src}));  // for the profiler
  return BlockedAttentionFunction::apply(q.contiguous(), k_src.contiguous(), v_src.contiguous(), layout, scale,
                                         max_score_elements);
}

}  // namespace lrb
