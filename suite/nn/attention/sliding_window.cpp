#include "suite/nn/attention/sliding_window.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <vector>

#include "suite/core/errors.h"
#include "suite/nn/attention/common.h"
#include "suite/nn/attention/kernel_registry.h"
#include "suite/nn/attention/softmax.h"

namespace lrb {
namespace {

constexpr const char* kName = "sliding_window";

// Query block j (source coordinates: the keys padded by w on the left) sees source keys
// [j*b, j*b + L), L = 2w + b, then `g` global keys appended as extra slots.
class SlidingWindowLayout final : public KeyLayout {
 public:
  SlidingWindowLayout(std::int64_t blocks, std::int64_t block, std::int64_t w, at::Tensor key_keep,
                      at::Tensor global_src, at::Tensor global_keep)
      : blocks_(blocks), b_(block), w_(w), L_(2 * w + block), key_keep_(std::move(key_keep)),
        global_src_(std::move(global_src)), global_keep_(std::move(global_keep)) {
    g_ = global_src_.defined() ? global_src_.size(1) : 0;
    // Query r of a block keeps window slot t iff |(t - w) - r| <= w.
    const auto opts = at::TensorOptions().dtype(at::kLong).device(key_keep_.device());
    const at::Tensor r = at::arange(b_, opts).view({b_, 1});
    const at::Tensor t = at::arange(L_, opts).view({1, L_});
    band_keep_ = t.ge(r).logical_and(t.le(r + 2 * w_)).view({1, 1, 1, b_, L_});
  }
  std::int64_t num_blocks() const override { return blocks_; }
  std::int64_t block_size() const override { return b_; }
  std::int64_t slots() const override { return L_ + g_; }

  at::Tensor gather(const at::Tensor& src, std::int64_t j0, std::int64_t n) const override {
    // unfold is a view of overlapping windows: block j's window is the L x d matrix at row
    // j*b of the source, which the products read in place (batched_matmul takes any batch
    // strides), so without globals the group's keys are not copied.
    const at::Tensor win = src.unfold(2, L_, b_).narrow(2, j0, n).transpose(-1, -2);
    if (g_ == 0) return win;
    const std::int64_t B = src.size(0), H = src.size(1), d = src.size(3);
    const at::Tensor glob = src.gather(2, global_src_.view({B, 1, g_, 1}).expand({B, H, g_, d}));
    return at::cat({win, glob.unsqueeze(2).expand({B, H, n, g_, d})}, 3);
  }

  void scatter_add(at::Tensor& dsrc, const at::Tensor& grad, std::int64_t j0, std::int64_t n) const override {
    const std::int64_t B = dsrc.size(0), H = dsrc.size(1), d = dsrc.size(3);
    // Window slots [t*b, t*b + b) of blocks j0..j0+n-1 are source rows (j+t)*b + r: disjoint
    // across blocks, so one strided view per piece takes them all without index_add.
    for (std::int64_t t0 = 0; t0 < L_; t0 += b_) {
      const std::int64_t len = std::min(b_, L_ - t0);
      at::Tensor dst = dsrc.as_strided({B, H, n, len, d}, {dsrc.stride(0), dsrc.stride(1), b_ * d, d, 1},
                                       dsrc.storage_offset() + (j0 * b_ + t0) * d);
      dst.add_(grad.narrow(3, t0, len));
    }
    if (g_ > 0) {
      const at::Tensor glob = grad.narrow(3, L_, g_).sum(2);
      dsrc.scatter_add_(2, global_src_.view({B, 1, g_, 1}).expand({B, H, g_, d}), glob);
    }
  }

  // Without globals gather is a view of the windows, so is the gradient's: the windows
  // overlap, and batched_matmul_accumulate adds block after block into it.
  at::Tensor gradient_view(at::Tensor& dsrc, std::int64_t j0, std::int64_t n) const override {
    if (g_ > 0) return {};
    return dsrc.unfold(2, L_, b_).narrow(2, j0, n).transpose(-1, -2);
  }
  at::Tensor drop_mask(std::int64_t j0, std::int64_t n) const override {
    const std::int64_t B = key_keep_.size(0);
    at::Tensor keep = key_keep_.unfold(1, L_, b_).narrow(1, j0, n).reshape({B, 1, n, 1, L_}).logical_and(band_keep_);
    if (g_ > 0) keep = at::cat({keep, global_keep_.view({B, 1, 1, 1, g_}).expand({B, 1, n, b_, g_})}, 4);
    return keep.logical_not();
  }

 private:
  std::int64_t blocks_, b_, w_, L_, g_ = 0;
  at::Tensor key_keep_;     // [B, Ns] bool: real, non-global source keys
  at::Tensor global_src_;   // [B, g] int64: global positions in source coordinates
  at::Tensor global_keep_;  // [B, g] bool: global keys that are real tokens
  at::Tensor band_keep_;    // [1, 1, 1, b, L]
};

// Global positions as int64 [B, g] on the device; distinct and in range.
at::Tensor normalise_global(const at::Tensor& global, std::int64_t B, std::int64_t N, const at::Tensor& like) {
  if (!global.defined() || global.numel() == 0) return {};
  at::Tensor idx;
  if (global.scalar_type() == at::kBool) {
    if (global.dim() != 2 || global.size(0) != B || global.size(1) != N)
      throw UserError(std::string(kName) + ": a bool global mask must be [B, N]");
    const at::Tensor cpu = global.cpu();
    const at::Tensor counts = cpu.sum(1);
    const std::int64_t g = counts[0].item<std::int64_t>();
    if (!counts.eq(g).all().item<bool>())
      throw UserError(std::string(kName) + ": every batch element needs the same number of global tokens");
    if (g == 0) return {};
    idx = cpu.nonzero().select(1, 1).view({B, g});
  } else {
    if (!at::isIntegralType(global.scalar_type(), /*includeBool=*/false) || global.dim() < 1 || global.dim() > 2)
      throw UserError(std::string(kName) + ": global positions must be int64 [g] or [B, g], or bool [B, N]");
    idx = global.cpu().to(at::kLong);
    if (idx.dim() == 1) idx = idx.view({1, -1}).expand({B, idx.size(0)});
    if (idx.size(0) != B) throw UserError(std::string(kName) + ": global positions [B, g] need B rows");
  }
  idx = idx.contiguous();
  if (idx.lt(0).any().item<bool>() || idx.ge(N).any().item<bool>())
    throw UserError(std::string(kName) + ": global positions must lie in [0, " + std::to_string(N) + ")");
  const at::Tensor sorted = std::get<0>(idx.sort(1));
  if (sorted.size(1) > 1 &&
      sorted.narrow(1, 1, sorted.size(1) - 1).eq(sorted.narrow(1, 0, sorted.size(1) - 1)).any().item<bool>())
    throw UserError(std::string(kName) + ": global positions must be distinct");
  return idx.to(like.device());
}

}  // namespace

std::int64_t sliding_window_block(const SlidingWindowOptions& options, std::int64_t tokens) {
  const std::int64_t w = std::min(options.window, std::max<std::int64_t>(tokens - 1, 0));
  const std::int64_t b = options.block > 0 ? options.block : std::min<std::int64_t>(64, w + 1);
  return std::max<std::int64_t>(1, std::min(b, tokens));
}

at::Tensor sliding_window_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                    const SlidingWindowOptions& options, const at::Tensor& mask,
                                    const at::Tensor& global, const GlobalProjections& global_qkv) {
  check_qkv(q, k, v, kName);
  if (q.size(2) != k.size(2)) throw UserError(std::string(kName) + ": q and k must have the same number of tokens");
  if (options.window < 0) throw UserError(std::string(kName) + ": window must be >= 0");
  if (options.block < 0) throw UserError(std::string(kName) + ": block must be >= 0 (0 = automatic)");
  const std::int64_t B = q.size(0), H = q.size(1), N = q.size(2);
  const at::Tensor keep_in = check_key_mask(mask, B, N, q, kName);
  const at::Tensor gidx = normalise_global(global, B, N, q);
  const bool has_gqkv = global_qkv.q.defined() || global_qkv.k.defined() || global_qkv.v.defined();
  if (has_gqkv) {
    check_qkv(global_qkv.q, global_qkv.k, global_qkv.v, std::string(kName) + " (global projections)");
    if (!global_qkv.q.sizes().equals(q.sizes()) || !global_qkv.k.sizes().equals(k.sizes()) ||
        !global_qkv.v.sizes().equals(v.sizes()))
      throw UserError(std::string(kName) + ": global projections must be shaped like q, k, v");
  }

  // A window wider than the sequence is the whole sequence.
  const std::int64_t w = std::min(options.window, N - 1);
  const std::int64_t b = sliding_window_block(options, N);
  const std::int64_t nb = ceil_div(N, b);
  const std::int64_t Ns = nb * b + 2 * w;
  const at::Tensor keep = keep_in.defined() ? keep_in : at::ones({B, N}, q.options().dtype(at::kBool));

  at::Tensor local_keep = keep;
  at::Tensor global_src, global_keep;
  if (gidx.defined()) {
    // Global keys leave the band and come back as extra slots, so each is counted once.
    local_keep = keep.scatter(1, gidx, false);
    global_src = gidx + w;
    global_keep = keep.gather(1, gidx);
  }
  at::Tensor key_keep = at::zeros({B, Ns}, keep.options());  // padding rows: never attended
  key_keep.narrow(1, w, N).copy_(local_keep);
  const auto layout = c10::make_intrusive<SlidingWindowLayout>(nb, b, w, key_keep, global_src, global_keep);
  const double scale = resolve_scale(options.scale, q.size(3));
  at::Tensor out = blocked_attention(pad_tokens(q, 0, nb * b - N), pad_tokens(k, w, Ns - N - w),
                                     pad_tokens(v, w, Ns - N - w), layout, scale, options.max_score_elements)
                       .narrow(2, 0, N);
  if (!gidx.defined()) return out;

  // Global queries: full rows over every key (one chunk of g rows, no N x N tensor).
  const std::int64_t g = gidx.size(1);
  const at::Tensor gq = has_gqkv ? global_qkv.q : q;
  const at::Tensor rows = gidx.view({B, 1, g, 1});
  const at::Tensor qg = gq.gather(2, rows.expand({B, H, g, q.size(3)}));
  const at::Tensor og = chunked_softmax_attention(qg, has_gqkv ? global_qkv.k : k, has_gqkv ? global_qkv.v : v,
                                                  keep_in, g, scale);
  return out.scatter(2, rows.expand({B, H, g, v.size(3)}), og);
}

std::int64_t sliding_window_score_elements(std::int64_t batch, std::int64_t heads, std::int64_t tokens,
                                           const SlidingWindowOptions& options, std::int64_t global_tokens) {
  const std::int64_t w = std::min(options.window, std::max<std::int64_t>(tokens - 1, 0));
  const std::int64_t b = sliding_window_block(options, tokens);
  const std::int64_t nb = ceil_div(tokens, b);
  return batch * heads * (nb * b * (2 * w + b + global_tokens) + global_tokens * tokens);
}

namespace {

// `lrbench attend --kernel sliding_window`: its options and how it runs on q, k, v.
AttentionKernel sliding_window_kernel() {
  using namespace kernel_spec;
  return {"sliding_window", "Longformer sliding window (w keys each side) with optional global tokens",
          {{int_opt("window", 256, "w: keys attended on each side (Longformer: 256)"),
            int_opt("block", 0, "query block size; 0 picks min(64, w+1)"), scale_opt()}},
          {"mask", "global"},
          [](const json& o, const AttentionTensors& in) {
            reject(in, "sliding_window", true, true, false);
            SlidingWindowOptions so;
            so.window = o.at("window").get<std::int64_t>();
            so.block = o.at("block").get<std::int64_t>();
            so.scale = o.at("scale").get<double>();
            AttentionRun r;
            r.out = sliding_window_attention(in.q, in.k, in.v, so, in.mask, in.global);
            std::int64_t g = 0;
            if (in.global.defined() && in.global.numel() > 0)
              g = in.global.scalar_type() == at::kBool ? in.global[0].sum().item<std::int64_t>()
                                                        : in.global.size(in.global.dim() - 1);
            r.score_elements =
                sliding_window_score_elements(in.q.size(0), in.q.size(1), in.q.size(2), so, g);
            return r;
          }};
}

}  // namespace

LRB_REGISTER_ATTENTION_KERNEL(30, sliding_window_kernel());

}  // namespace lrb
