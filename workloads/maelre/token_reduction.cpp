#include "workloads/maelre/token_reduction.h"

#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
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
// to this many output positions the convolution is computed as products, with the same
// weights (so checkpoints and FLOPs are unchanged); larger grids keep the convolution,
// which is faster there.
// On a GPU only the single output's product is taken: the products of more outputs are added
// together with index_add, whose CUDA kernel adds with atomics (a deterministic GPU run
// warns, suite/runtime/cuda_device.cpp), and the products were chosen for oneDNN's speed at
// these grids, not cuDNN's.
constexpr std::int64_t kProductMaxOutputs = 4;

// Along one axis of n positions (kernel 2s+1, stride s, padding s), the kernel's taps that
// see the same outputs: tap t of output o reads position o*s - s + t, where it lies in
// [0, n). Taps that see no position (only padding) are in no class. The outputs a tap sees
// shift down as t grows, so each class is a run of taps.
struct TapClass {
  std::vector<std::int64_t> taps, outputs;
};

std::vector<TapClass> tap_classes(std::int64_t n, std::int64_t s) {
  const std::int64_t outputs = (n + s - 1) / s;
  std::vector<TapClass> classes;
  for (std::int64_t t = 0; t <= 2 * s; ++t) {
    std::vector<std::int64_t> seen;
    for (std::int64_t o = 0; o < outputs; ++o)
      if (o * s - s + t >= 0 && o * s - s + t < n) seen.push_back(o);
    if (seen.empty()) continue;
    auto same = std::find_if(classes.begin(), classes.end(), [&](const TapClass& c) { return c.outputs == seen; });
    if (same == classes.end()) classes.push_back({{t}, seen});
    else same->taps.push_back(t);
  }
  return classes;
}

// One product of the convolution: the taps of one class per axis, at every output that
// all of them see; rows (sample, output), columns (tap, channel).
struct TapBlock {
  std::int64_t ty0, kh, tx0, kw;        // the kernel's taps [ty0, ty0 + kh) x [tx0, tx0 + kw)
  std::vector<std::int64_t> outputs;    // flat output index oy * W' + ox
  std::vector<std::int64_t> positions;  // per (output, tap), output-major: flat input index
};

std::vector<TapBlock> tap_blocks(std::int64_t h, std::int64_t w, std::int64_t s) {
  const std::int64_t wo = (w + s - 1) / s;
  std::vector<TapBlock> blocks;
  for (const TapClass& cy : tap_classes(h, s)) {
    for (const TapClass& cx : tap_classes(w, s)) {
      TapBlock b;
      b.ty0 = cy.taps.front();
      b.kh = static_cast<std::int64_t>(cy.taps.size());
      b.tx0 = cx.taps.front();
      b.kw = static_cast<std::int64_t>(cx.taps.size());
      for (auto oy : cy.outputs) {
        for (auto ox : cx.outputs) {
          b.outputs.push_back(oy * wo + ox);
          for (auto ty : cy.taps)
            for (auto tx : cx.taps) b.positions.push_back((oy * s - s + ty) * w + (ox * s - s + tx));
        }
      }
      blocks.push_back(std::move(b));
    }
  }
  return blocks;
}

// whole [D', D, k, k] += used [D', kh, kw, D] at taps [y0, y0 + kh) x [x0, x0 + kw). The
// kernel's taps lie k * k floats apart, so on a CPU the loop takes one output channel's
// taps at a time (its k * k * D floats stay in cache) and walks the input channels inside:
// TensorIterator would make the taps the inner loop, 2 floats long on a 2 x 2 rectangle
// (4x slower there), or take a pass over the whole gradient per tap. Elsewhere a plain
// strided add, not index_add_: its CUDA kernel adds with atomics, which a deterministic GPU
// run warns about (suite/runtime/cuda_device.cpp).
void add_used_taps(at::Tensor& whole, const at::Tensor& used, std::int64_t y0, std::int64_t x0) {
  const std::int64_t kh = used.size(1), kw = used.size(2);
  const at::ScalarType type = whole.scalar_type();
  if (!whole.is_cpu() || !whole.is_contiguous() || used.scalar_type() != type || (type != at::kFloat && type != at::kDouble)) {
    whole.narrow(2, y0, kh).narrow(3, x0, kw).add_(used.permute({0, 3, 1, 2}));
    return;
  }
  const at::Tensor taps = used.contiguous();
  const std::int64_t outputs = whole.size(0), channels = whole.size(1), k2 = whole.size(2) * whole.size(3);
  const std::int64_t row = whole.size(3);
  AT_DISPATCH_FLOATING_TYPES(type, "lrb_add_used_taps", [&] {
    scalar_t* const to = whole.data_ptr<scalar_t>();
    const scalar_t* const from = taps.data_ptr<scalar_t>();
    at::parallel_for(0, outputs, 16, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t o = begin; o < end; ++o)
        for (std::int64_t ty = 0; ty < kh; ++ty)
          for (std::int64_t tx = 0; tx < kw; ++tx) {
            scalar_t* w = to + o * channels * k2 + (y0 + ty) * row + x0 + tx;
            const scalar_t* g = from + ((o * kh + ty) * kw + tx) * channels;
            for (std::int64_t c = 0; c < channels; ++c) w[c * k2] += g[c];
          }
    });
  });
}

// The blocks' taps of the weight [D', D, k, k], each as one [D', kh, kw, D] copy (as its
// product's rows: tap-major). Differentiated through a gather, each backward would build the
// whole kernel's gradient (zeros, then the taps added in) and autograd would add all of it to
// the parameter's: for MAELRE's last reduction, which uses 4 taps of 25, three passes over a
// quarter of the model. This Function's backward instead adds the blocks' gradients to the
// weight's .grad in place, in one pass over the used taps' rectangle (add_used_taps), and
// gives autograd no gradient for the weight; the unused taps keep the zeros zero_grad left.
// No block's gradient outlives the backward's use of it, as it did in a leaf's .grad when
// hooks added them. So the weight's gradient arrives in .grad after backward(), where
// training reads it, but torch::autograd::grad asked for the weight finds it unused.
// Geometry: the used rectangle y0, y1, x0, x1, then ty0, kh, tx0, kw per block.
struct GatheredTaps : torch::autograd::Function<GatheredTaps> {
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx, const at::Tensor& weight,
                                                std::vector<std::int64_t> geometry) {
    const std::int64_t y0 = geometry[0], y1 = geometry[1], x0 = geometry[2], x1 = geometry[3];
    const std::size_t blocks = (geometry.size() - 4) / 4;
    // One strided pass over the weight; each block's copy then reads only its own taps.
    // Copies (clone), never views: an output of a Function may not share the weight's or
    // another output's storage.
    const auto copy = at::MemoryFormat::Contiguous;
    const at::Tensor used = weight.narrow(2, y0, y1 - y0).narrow(3, x0, x1 - x0).permute({0, 2, 3, 1}).clone(copy);
    torch::autograd::variable_list taps;
    for (std::size_t b = 0; b < blocks; ++b) {
      const std::int64_t* g = &geometry[4 + 4 * b];
      taps.push_back(blocks == 1 ? used : used.narrow(1, g[0] - y0, g[1]).narrow(2, g[2] - x0, g[3]).clone(copy));
    }
    ctx->saved_data["weight"] = weight;  // whose .grad the backward adds to
    ctx->saved_data["geometry"] = std::move(geometry);
    return taps;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx, torch::autograd::variable_list grads) {
    const at::Tensor weight = ctx->saved_data["weight"].toTensor();
    const std::vector<std::int64_t> geometry = ctx->saved_data["geometry"].toIntVector();
    const std::int64_t y0 = geometry[0], y1 = geometry[1], x0 = geometry[2], x1 = geometry[3];
    at::Tensor used = grads[0];  // [D', y1 - y0, x1 - x0, D]
    if (grads.size() > 1) {
      used = at::empty({weight.size(0), y1 - y0, x1 - x0, weight.size(1)}, grads[0].options());
      for (std::size_t b = 0; b < grads.size(); ++b) {
        const std::int64_t* g = &geometry[4 + 4 * b];
        used.narrow(1, g[0] - y0, g[1]).narrow(2, g[2] - x0, g[3]).copy_(grads[b]);
      }
    }
    at::Tensor& whole = weight.mutable_grad();
    if (!whole.defined()) whole = at::zeros_like(weight, at::MemoryFormat::Contiguous);
    add_used_taps(whole, used, y0, x0);
    return {at::Tensor(), at::Tensor()};
  }
};

// Each block's taps as a [D', taps * D] matrix.
std::vector<at::Tensor> gathered_taps(const at::Tensor& weight, const std::vector<TapBlock>& blocks) {
  std::vector<std::int64_t> geometry{weight.size(2), 0, weight.size(3), 0};  // the used rectangle, grown below
  for (const TapBlock& b : blocks) {
    geometry[0] = std::min(geometry[0], b.ty0), geometry[1] = std::max(geometry[1], b.ty0 + b.kh);
    geometry[2] = std::min(geometry[2], b.tx0), geometry[3] = std::max(geometry[3], b.tx0 + b.kw);
  }
  for (const TapBlock& b : blocks) geometry.insert(geometry.end(), {b.ty0, b.kh, b.tx0, b.kw});
  std::vector<at::Tensor> taps = GatheredTaps::apply(weight, std::move(geometry));
  for (at::Tensor& t : taps) t = t.view({weight.size(0), -1});
  return taps;
}

}  // namespace

// The strided convolution as products: each output position's (2s+1)^2 input taps times the
// kernel, [B, D, H, W] -> [B, H'W', D'], leaving out the taps that fall on padding. Taps are
// grouped, per axis, by the outputs that see them (tap_classes); each pair of classes is one
// product over exactly the (output, tap) pairs that read the grid, so no multiply is spent
// on padding: on MAELRE's 4 x 4 -> 2 x 2 reduction (kernel 5), 49 of the 100 (output, tap)
// pairs, in nine products; on its 2 x 2 -> 1 x 1 reduction, one product over 4 taps of 25.
at::Tensor strided_conv_as_product(const torch::nn::Conv2d& conv, const at::Tensor& x, std::int64_t s) {
  const at::Tensor& weight = conv->weight;  // [D', D, k, k]
  const std::int64_t B = x.size(0), D = x.size(1), h = x.size(2), w = x.size(3), out = weight.size(0);
  const std::int64_t outputs = ((h + s - 1) / s) * ((w + s - 1) / s);
  const std::vector<TapBlock> blocks = tap_blocks(h, w, s);
  if (blocks.size() == 1)  // one output per sample, whose window is the grid: its rows are the samples as they lie
    return at::addmm(conv->bias, x.permute({0, 2, 3, 1}).reshape({B, -1}), gathered_taps(weight, blocks)[0].t()).view({B, 1, out});
  // Every block's rows gathered from the tokens at once, block after block, each
  // (sample, output, tap)-major: a block's rows are then one contiguous [rows, taps * D].
  std::vector<std::int64_t> rows_index, out_index, row_counts;
  for (const TapBlock& b : blocks) {
    for (std::int64_t n = 0; n < B; ++n) {
      for (auto p : b.positions) rows_index.push_back(n * h * w + p);
      for (auto o : b.outputs) out_index.push_back(n * outputs + o);
    }
    row_counts.push_back(B * static_cast<std::int64_t>(b.positions.size()));
  }
  const at::Tensor tokens = x.flatten(2).transpose(1, 2).reshape({B * h * w, D});
  const auto on_device = x.options().dtype(at::kLong);  // the indices live where the tensors do
  const at::Tensor gathered = tokens.index_select(0, at::tensor(rows_index, on_device));
  const std::vector<at::Tensor> rows = gathered.split_with_sizes(row_counts);
  const std::vector<at::Tensor> taps = gathered_taps(weight, blocks);
  std::vector<at::Tensor> products;
  for (std::size_t i = 0; i < blocks.size(); ++i)
    products.push_back(at::mm(rows[i].view({-1, blocks[i].kh * blocks[i].kw * D}), taps[i].t()));
  const at::Tensor parts = at::cat(products);  // [rows of all blocks, D']
  const at::Tensor y = at::zeros({B * outputs, out}, parts.options()).index_add(0, at::tensor(out_index, on_device), parts);
  return (y + conv->bias.to(y.scalar_type())).view({B, outputs, out});
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
      const Fp32CpuConvScope fp32_conv(xc);  // LibTorch's bf16 CPU convolution: suite/nn/fp32_cpu_conv.h
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
      const bool as_product = ho * wo == 1 || (ho * wo <= kProductMaxOutputs && xg.is_cpu());
      out.tokens = as_product ? strided_conv_as_product(conv2d_, xg, s) : conv2d_->forward(xg).flatten(2).transpose(1, 2);
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
