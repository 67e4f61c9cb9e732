#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "tests/support/attention_test_util.h"
#include "workloads/maelre/token_reduction.h"

namespace lrb {
namespace {

// The product form of MAELRE's strided convolution gives the convolution's values and
// gradients (input, weights, bias) on every grid it is used on, odd and uneven ones included.
TEST(MaelreTokenReduction, TheConvolutionAsAProductMatchesTheConvolution) {
  at::manual_seed(11);
  for (const std::int64_t s : {2, 3}) {
    for (const auto& [h, w] : std::vector<std::pair<std::int64_t, std::int64_t>>{{1, 1}, {2, 2}, {3, 3}, {4, 4}, {2, 5}, {7, 7}}) {
      SCOPED_TRACE("stride " + std::to_string(s) + ", grid " + std::to_string(h) + "x" + std::to_string(w));
      torch::nn::Conv2d conv(torch::nn::Conv2dOptions(3, 5, 2 * s + 1).stride(s).padding(s));
      conv->to(at::kDouble);
      const at::Tensor x = at::randn({2, 3, h, w}, at::kDouble).set_requires_grad(true);
      const at::Tensor ours = strided_conv_as_product(conv, x, s);
      const at::Tensor ref = conv->forward(x).flatten(2).transpose(1, 2);
      ASSERT_EQ(ours.sizes(), ref.sizes());
      EXPECT_LT(test::max_abs_diff(ours, ref), 1e-12);
      // The gradients as training reads them: .grad after backward(), twice (the first
      // finds none, the second adds to it). The products' taps add their gradient to the
      // weight's in place (GatheredTaps), outside autograd's own accumulation.
      const at::Tensor g = at::randn(ref.sizes(), at::kDouble);
      const std::vector<at::Tensor> params = {x, conv->weight, conv->bias};
      const auto grads_of = [&](const at::Tensor& out) {
        for (const auto& p : params) p.mutable_grad() = at::Tensor();
        (out * g).sum().backward({}, /*retain_graph=*/true);
        (out * g).sum().backward();
        std::vector<at::Tensor> grads;
        for (const auto& p : params) grads.push_back(p.grad().clone());
        return grads;
      };
      const auto d_ours = grads_of(ours), d_ref = grads_of(ref);
      for (std::size_t i = 0; i < d_ours.size(); ++i) EXPECT_LT(test::max_abs_diff(d_ours[i], d_ref[i]), 1e-12) << "gradient " << i;
    }
  }
}

}  // namespace
}  // namespace lrb
