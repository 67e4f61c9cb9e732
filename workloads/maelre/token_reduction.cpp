#include "workloads/maelre/token_reduction.h"

#include <ATen/ATen.h>

#include <cmath>

#include "suite/core/errors.h"
#include "suite/nn/fp32_cpu_conv.h"

namespace lrb {

std::int64_t reduction_stride(std::int64_t nu, std::size_t grid_rank) {
  if (grid_rank == 1) return nu;
  const auto s = static_cast<std::int64_t>(std::llround(std::sqrt(static_cast<double>(nu))));
  LRB_CHECK(s * s == nu, "2-D token reduction needs a square nu (validated by the model schema)");
  return s;
}

std::vector<std::int64_t> reduced_grid(const std::vector<std::int64_t>& grid, std::int64_t nu, const std::string& op) {
  if (op == "none") return grid;
  const std::int64_t s = reduction_stride(nu, grid.size());
  std::vector<std::int64_t> out;
  for (auto g : grid) out.push_back((g + s - 1) / s);
  return out;
}

double reduction_flops(const std::string& op, const std::vector<std::int64_t>& grid, std::int64_t nu,
                       std::int64_t dim_in, std::int64_t dim_out) {
  const auto out = reduced_grid(grid, nu, op);
  double n_out = 1;
  for (auto g : out) n_out *= static_cast<double>(g);
  if (op == "none") return 2 * n_out * static_cast<double>(dim_in) * static_cast<double>(dim_out);
  const double s = static_cast<double>(reduction_stride(nu, grid.size()));
  const double taps = std::pow(2 * s + 1, static_cast<double>(grid.size()));
  const double din = static_cast<double>(dim_in), dout = static_cast<double>(dim_out);
  if (op == "conv") return 2 * n_out * dout * din * taps;
  if (op == "avgpool") return n_out * din * static_cast<double>(nu) + 2 * n_out * din * dout;
  return 2 * n_out * static_cast<double>(nu) * din * dout;  // linear-projection
}

namespace {

// The last reductions see a 4 x 4 or 2 x 2 grid, where LibTorch's CPU convolution (oneDNN in
// 1.13) is slow: at 2 x 2 -> 1 x 1, 256 -> 512 channels it took 5-6x as long as the same
// product written out, forward + backward at batch 32 (build/tests/lrb_bench
// --benchmark_filter=maelre/reduction; the figures in docs/benchmarks.md). Up
// to this many output positions the convolution is computed as that product, with the
// same weights (so checkpoints and FLOPs are unchanged); larger grids keep the convolution,
// which is faster there.
constexpr std::int64_t kProductMaxOutputs = 4;

// The single output's product: its window is the grid, whose taps are the kernel's
// [y0, y0 + kh) x [x0, x0 + kw). They are gathered in the grid's token order, [D', kh, kw, D],
// so each sample's grid, in that order, is its row (for a grid that views the tokens, the
// tokens as they lie). Differentiated through narrow(), each backward built the whole
// kernel's gradient (zeros, then the taps copied in, in runs of kw floats) and autograd added
// all of it to the parameter's: three passes over a kernel of which MAELRE's last reduction
// uses 4 taps of 25 (3.28M entries, a quarter of the model). The gathered taps are a leaf
// instead, whose gradient a hook adds to the weight's tap planes in place; the other taps
// keep the zeros zero_grad left. So the weight's gradient arrives in .grad after backward(),
// where training reads it, but torch::autograd::grad asked for the weight finds it unused.
at::Tensor single_output_product(const torch::nn::Conv2d& conv, const at::Tensor& x, std::int64_t y0,
                                 std::int64_t kh, std::int64_t x0, std::int64_t kw) {
  const at::Tensor& w = conv->weight;  // [D', D, k, k]
  const at::Tensor taps_view = w.narrow(2, y0, kh).narrow(3, x0, kw).permute({0, 2, 3, 1});
  at::Tensor taps;
  if (w.requires_grad() && at::GradMode::is_enabled()) {
    taps = taps_view.detach().contiguous().requires_grad_(true);
    taps.register_hook([w, y0, kh, x0, kw](const at::Tensor& grad) {
      at::Tensor& whole = w.mutable_grad();
      if (!whole.defined()) whole = at::zeros_like(w, at::MemoryFormat::Contiguous);
      for (std::int64_t ty = 0; ty < kh; ++ty)
        for (std::int64_t tx = 0; tx < kw; ++tx)
          whole.select(3, x0 + tx).select(2, y0 + ty).add_(grad.select(2, tx).select(1, ty));
    });
  } else {
    taps = taps_view.contiguous();
  }
  const std::int64_t B = x.size(0);
  return at::addmm(conv->bias, x.permute({0, 2, 3, 1}).reshape({B, -1}), taps.view({w.size(0), -1}).t()).view({B, 1, w.size(0)});
}

}  // namespace

// The strided convolution as one product: each output position's (2s+1)^2 input taps
// (zero beyond the grid) times the kernel, flattened. [B, D, H, W] -> [B, H'W', D'].
// Along an axis the grid spans within one stride (n <= s) there is one output, whose window
// is the grid itself (kernel taps s .. s+n-1): the kernel's other taps there only ever
// multiply padding, so the product leaves them out (their gradient is zero either way). For
// MAELRE's last reduction (2 x 2 -> 1 x 1, kernel 5) that is 4 taps of 25.
at::Tensor strided_conv_as_product(const torch::nn::Conv2d& conv, const at::Tensor& x, std::int64_t s) {
  const at::Tensor& w = conv->weight;  // [D', D, k, k]
  const std::int64_t k = w.size(-1), B = x.size(0), h = x.size(2), wd = x.size(3);
  const auto first_tap = [&](std::int64_t n) { return n <= s ? s : std::int64_t{0}; };
  const auto taps_used = [&](std::int64_t n) { return n <= s ? n : k; };
  const std::int64_t y0 = first_tap(h), kh = taps_used(h), x0 = first_tap(wd), kw = taps_used(wd);
  if (h <= s && wd <= s) return single_output_product(conv, x, y0, kh, x0, kw);
  const at::Tensor kernel = kh == k && kw == k ? w : w.narrow(2, y0, kh).narrow(3, x0, kw);
  const at::Tensor taps = at::im2col(x, {kh, kw}, {1, 1}, {s - y0, s - x0}, {s, s});  // [B, D * kh * kw, H'W']
  const std::int64_t positions = taps.size(2);
  // One row per (sample, position), made contiguous here: at::linear on the transposed
  // view took 10x as long in its backward (LibTorch 1.13).
  const at::Tensor rows = taps.transpose(1, 2).reshape({B * positions, taps.size(1)});
  return at::addmm(conv->bias, rows, kernel.reshape({w.size(0), -1}).t()).view({B, positions, w.size(0)});
}

TokenReductionImpl::TokenReductionImpl(std::string op, std::int64_t nu, std::int64_t dim_in, std::int64_t dim_out,
                                       std::size_t grid_rank)
    : op_(std::move(op)), nu_(nu), stride_(reduction_stride(nu, grid_rank)), dim_in_(dim_in), dim_out_(dim_out),
      rank_(grid_rank) {
  const std::int64_t s = stride_;
  if (op_ == "conv") {
    if (rank_ == 1)
      conv1d_ = register_module("conv", torch::nn::Conv1d(torch::nn::Conv1dOptions(dim_in, dim_out, 2 * s + 1).stride(s).padding(s)));
    else
      conv2d_ = register_module("conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(dim_in, dim_out, 2 * s + 1).stride(s).padding(s)));
  } else if (op_ == "avgpool") {
    linear_ = register_module("proj", torch::nn::Linear(dim_in, dim_out));
  } else if (op_ == "none") {
    linear_ = register_module("proj", torch::nn::Linear(dim_in, dim_out));
  } else {
    LRB_CHECK(op_ == "linear-projection", "unknown reduction operator " + op_);
    linear_ = register_module("proj", torch::nn::Linear(dim_in * nu, dim_out));
  }
}

ReducedTokens TokenReductionImpl::forward(const at::Tensor& tokens, const at::Tensor& keep,
                                          const std::vector<std::int64_t>& grid) {
  const std::int64_t B = tokens.size(0), s = stride_;
  ReducedTokens out;
  out.grid = reduced_grid(grid, nu_, op_);
  if (op_ == "none") {  // no merging: the same tokens, wider
    out.tokens = linear_->forward(tokens);
    out.keep = keep;
    return out;
  }
  // Padding tokens are zeroed so they add nothing to a reduced token.
  at::Tensor x = keep.defined() ? tokens * keep.unsqueeze(-1).to(tokens.scalar_type()) : tokens;
  if (rank_ == 1) {
    const std::int64_t n = grid[0], n_out = out.grid[0];
    at::Tensor xc = x.transpose(1, 2);  // [B, D, N]
    if (op_ == "conv") {
      const Fp32CpuConvScope fp32_conv(xc);  // LibTorch 1.13's bf16 CPU convolution: suite/nn/fp32_cpu_conv.h
      out.tokens = conv1d_->forward(xc).transpose(1, 2);
    } else {
      xc = at::constant_pad_nd(xc, {0, n_out * s - n});
      at::Tensor groups = xc.view({B, dim_in_, n_out, s});  // [B, D, N', s]
      if (op_ == "avgpool") {
        at::Tensor w = keep.defined() ? at::constant_pad_nd(keep.to(x.scalar_type()), {0, n_out * s - n}).view({B, 1, n_out, s})
                                      : at::constant_pad_nd(at::ones({B, 1, n}, x.options()), {0, n_out * s - n}).view({B, 1, n_out, s});
        at::Tensor mean = groups.sum(-1) / w.sum(-1).clamp_min(1.0);  // [B, D, N']
        out.tokens = linear_->forward(mean.transpose(1, 2));
      } else {
        out.tokens = linear_->forward(groups.permute({0, 2, 3, 1}).reshape({B, n_out, s * dim_in_}));
      }
    }
    if (keep.defined()) {
      at::Tensor k = at::constant_pad_nd(keep.to(at::kFloat), {0, n_out * s - n}).view({B, n_out, s});
      out.keep = k.amax(-1).gt(0);
    }
  } else {
    const std::int64_t h = grid[0], w = grid[1], ho = out.grid[0], wo = out.grid[1];
    at::Tensor xg = x.transpose(1, 2).reshape({B, dim_in_, h, w});
    if (op_ == "conv") {
      out.tokens = ho * wo <= kProductMaxOutputs ? strided_conv_as_product(conv2d_, xg, s)
                                                 : conv2d_->forward(xg).flatten(2).transpose(1, 2);
    } else {
      xg = at::constant_pad_nd(xg, {0, wo * s - w, 0, ho * s - h});
      at::Tensor patches = xg.view({B, dim_in_, ho, s, wo, s}).permute({0, 2, 4, 3, 5, 1});  // [B, H', W', s, s, D]
      if (op_ == "avgpool") {
        at::Tensor ones = at::constant_pad_nd(at::ones({B, 1, h, w}, x.options()), {0, wo * s - w, 0, ho * s - h});
        at::Tensor count = ones.view({B, 1, ho, s, wo, s}).sum({3, 5}).permute({0, 2, 3, 1});  // [B, H', W', 1]
        out.tokens = linear_->forward((patches.sum({3, 4}) / count).reshape({B, ho * wo, dim_in_}));
      } else {
        out.tokens = linear_->forward(patches.reshape({B, ho * wo, s * s * dim_in_}));
      }
    }
  }
  return out;
}

}  // namespace lrb
