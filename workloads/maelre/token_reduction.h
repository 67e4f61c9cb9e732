#pragma once
// MAELRE's token reduction (after each block, or between blocks): cuts the token count by
// nu and doubles the width. On a 1-D grid, groups of nu tokens; on a 2-D grid, sqrt(nu) per axis (nu = 4:
// stride 2 per axis, 4x fewer tokens). Operators (an option, as in the paper's ablation):
//   conv               strided convolution, kernel 2s+1, stride s (the paper's choice)
//   avgpool            average of each group (real tokens only), then a linear map to 2D
//   linear-projection  concatenate each group, then a learned linear map to 2D
//   none               no merging: every token kept, a per-token linear map to 2D (the
//                      paper's ablation without token merging; widths and heads as usual)
#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>

#include <string>
#include <vector>

namespace lrb {

struct ReducedTokens {
  at::Tensor tokens;  // [B, N', D']
  at::Tensor keep;    // [B, N'] or undefined
  std::vector<std::int64_t> grid;
};

// Stride per axis for a grid of this rank (1-D: nu; 2-D: sqrt(nu), which must be whole).
std::int64_t reduction_stride(std::int64_t nu, std::size_t grid_rank);
// The grid after one reduction by `op` (unchanged for "none").
std::vector<std::int64_t> reduced_grid(const std::vector<std::int64_t>& grid, std::int64_t nu,
                                       const std::string& op = "conv");
// Forward FLOPs per sample of one reduction.
double reduction_flops(const std::string& op, const std::vector<std::int64_t>& grid, std::int64_t nu,
                       std::int64_t dim_in, std::int64_t dim_out);
// The 2-D strided convolution (kernel 2s+1, stride s, padding s) as products over each
// output position's taps that read the grid (none on padding): conv(x) flattened to
// [B, H'W', D'], the same weights; the weight's gradient is added to its .grad in place.
at::Tensor strided_conv_as_product(const torch::nn::Conv2d& conv, const at::Tensor& x, std::int64_t s);

class TokenReductionImpl : public torch::nn::Module {
 public:
  TokenReductionImpl(std::string op, std::int64_t nu, std::int64_t dim_in, std::int64_t dim_out, std::size_t grid_rank);
  ReducedTokens forward(const at::Tensor& tokens, const at::Tensor& keep, const std::vector<std::int64_t>& grid);

 private:
  std::string op_;
  std::int64_t nu_, stride_, dim_in_, dim_out_;
  std::size_t rank_;
  torch::nn::Conv1d conv1d_{nullptr};
  torch::nn::Conv2d conv2d_{nullptr};
  torch::nn::Linear linear_{nullptr};
};
TORCH_MODULE(TokenReduction);

}  // namespace lrb
