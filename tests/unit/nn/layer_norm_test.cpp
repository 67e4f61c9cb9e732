// lrb::layer_norm and lrb::LayerNorm: the row loop's values and gradients against LibTorch's
// layer norm in float64, the cases it leaves to LibTorch, and the module's place of
// torch::nn::LayerNorm (parameters, initialisation, checkpoints).
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/nn/modules/normalization.h>

#include <vector>

#include "suite/nn/cpu/layer_norm.h"

namespace lrb {
namespace {

struct Grads {
  at::Tensor out, x, w, b;
};

// Forward and backward (x, weight, bias) of `norm` at type `type`, for the same values.
template <typename Norm>
Grads run(Norm norm, const at::Tensor& x0, const at::Tensor& w0, const at::Tensor& b0, const at::Tensor& g,
          at::ScalarType type) {
  const at::Tensor x = x0.to(type).requires_grad_(true);
  const at::Tensor w = w0.defined() ? w0.to(type).requires_grad_(true) : at::Tensor();
  const at::Tensor b = b0.defined() ? b0.to(type).requires_grad_(true) : at::Tensor();
  const at::Tensor out = norm(x, w, b);
  std::vector<at::Tensor> inputs{x};
  if (w.defined()) inputs.push_back(w);
  if (b.defined()) inputs.push_back(b);
  const auto grads = torch::autograd::grad({out}, inputs, {g.to(type)});
  return {out, grads[0], w.defined() ? grads[1] : at::Tensor(), b.defined() ? grads.back() : at::Tensor()};
}

void expect_close(const at::Tensor& got, const at::Tensor& want, double tol, const char* what) {
  ASSERT_EQ(got.defined(), want.defined()) << what;
  if (!got.defined()) return;
  EXPECT_TRUE(at::allclose(got.to(at::kDouble), want.to(at::kDouble), tol, tol))
      << what << ": " << (got.to(at::kDouble) - want.to(at::kDouble)).abs().max().item<double>();
}

TEST(LayerNorm, RowLoopMatchesLibTorchInFloat64) {
  at::manual_seed(3);
  const std::vector<std::vector<std::int64_t>> shapes{{3, 5, 32}, {7, 64}, {2, 3, 4, 8}, {4, 256}, {1, 1, 8}, {33, 40}};
  for (const auto& shape : shapes) {
    for (const bool affine : {true, false}) {
      SCOPED_TRACE(at::IntArrayRef(shape));
      const std::int64_t d = shape.back();
      // An offset and a spread per row, so the mean's and the variance's rounding both matter.
      const at::Tensor x = at::randn(shape, at::kDouble) * 3 + 10;
      const at::Tensor w = affine ? at::randn({d}, at::kDouble) : at::Tensor();
      const at::Tensor b = affine ? at::randn({d}, at::kDouble) : at::Tensor();
      const at::Tensor g = at::randn(shape, at::kDouble);
      const auto ours = [](const at::Tensor& x, const at::Tensor& w, const at::Tensor& b) {
        return lrb::layer_norm(x, w, b, 1e-5);
      };
      const auto libtorch = [d](const at::Tensor& x, const at::Tensor& w, const at::Tensor& b) {
        return at::layer_norm(x, {d}, w, b, 1e-5);
      };
      const Grads got = run(ours, x, w, b, g, at::kFloat), want = run(libtorch, x, w, b, g, at::kDouble);
      expect_close(got.out, want.out, 2e-5, "output");
      expect_close(got.x, want.x, 2e-4, "x's gradient");
      expect_close(got.w, want.w, 2e-4, "the weight's gradient");
      expect_close(got.b, want.b, 2e-4, "the bias's gradient");
    }
  }
}

TEST(LayerNorm, ConstantRowsGiveTheBias) {
  const at::Tensor x = at::full({4, 16}, 7.5f), w = at::randn({16}), b = at::randn({16});
  const at::Tensor y = lrb::layer_norm(x, w, b, 1e-5);
  EXPECT_TRUE(at::equal(y, b.expand({4, 16})));
}

TEST(LayerNorm, StridedInputsAreNormalisedAlongTheirLastDimension) {
  // A stem's tokens as they arrive: a transposed view. The function saves that view, not the
  // copy it normalises, and the backward reads it.
  const at::Tensor x0 = at::randn({16, 6, 3}).permute({2, 1, 0}), g = at::randn({3, 6, 16});  // x0 [3, 6, 16], strided
  const at::Tensor w0 = at::randn({16}), b0 = at::randn({16});
  const Grads got = run([](const at::Tensor& x, const at::Tensor& w, const at::Tensor& b) { return lrb::layer_norm(x, w, b, 1e-6); },
                        x0, w0, b0, g, at::kFloat);
  const Grads want = run([](const at::Tensor& x, const at::Tensor& w, const at::Tensor& b) { return at::layer_norm(x, {16}, w, b, 1e-6); },
                         x0, w0, b0, g, at::kDouble);
  expect_close(got.out, want.out, 1e-5, "output");
  expect_close(got.x, want.x, 1e-4, "x's gradient");
  expect_close(got.w, want.w, 1e-4, "the weight's gradient");
  expect_close(got.b, want.b, 1e-4, "the bias's gradient");
}

TEST(LayerNorm, LeavesOtherWidthsAndTypesToLibTorch) {
  // Exactly LibTorch's values where the row loop does not apply: widths not a multiple of 8,
  // float64, bfloat16.
  const at::Tensor x = at::randn({5, 12}), w = at::randn({12}), b = at::randn({12});
  EXPECT_TRUE(at::equal(lrb::layer_norm(x, w, b, 1e-5), at::layer_norm(x, {12}, w, b, 1e-5)));
  const at::Tensor xd = at::randn({5, 16}, at::kDouble), wd = at::randn({16}, at::kDouble);
  EXPECT_TRUE(at::equal(lrb::layer_norm(xd, wd, {}, 1e-5), at::layer_norm(xd, {16}, wd, {}, 1e-5)));
  const at::Tensor xb = at::randn({5, 16}).to(at::kBFloat16), wb = at::randn({16}).to(at::kBFloat16);
  EXPECT_TRUE(at::equal(lrb::layer_norm(xb, wb, {}, 1e-5), at::layer_norm(xb, {16}, wb, {}, 1e-5)));
  // And everything, asked (the tests' switch).
  const at::Tensor x8 = at::randn({5, 16}), w8 = at::randn({16});
  layer_norm_use_libtorch() = true;
  const at::Tensor switched = lrb::layer_norm(x8, w8, {}, 1e-5);
  layer_norm_use_libtorch() = false;
  EXPECT_TRUE(at::equal(switched, at::layer_norm(x8, {16}, w8, {}, 1e-5)));
}

TEST(LayerNorm, SameBitsAtAnyThreadCount) {
  const at::Tensor x = at::randn({64, 197, 32}), w = at::randn({32}), b = at::randn({32});
  const int threads = at::get_num_threads();
  at::set_num_threads(1);
  const at::Tensor one = lrb::layer_norm(x, w, b, 1e-5);
  at::set_num_threads(2);
  const at::Tensor two = lrb::layer_norm(x, w, b, 1e-5);
  at::set_num_threads(threads);
  EXPECT_TRUE(at::equal(one, two));
}

TEST(LayerNorm, TheModuleTakesTorchsPlace) {
  for (const bool affine : {true, false}) {
    const auto options = torch::nn::LayerNormOptions({32}).eps(1e-6).elementwise_affine(affine);
    LayerNorm ours(options);
    torch::nn::LayerNorm theirs(options);
    // The same names, shapes and initial values: a checkpoint of either loads into the other.
    const auto a = ours->named_parameters(), b = theirs->named_parameters();
    ASSERT_EQ(a.size(), b.size());
    for (const auto& item : b) {
      ASSERT_NE(a.find(item.key()), nullptr) << item.key();
      EXPECT_TRUE(at::equal(a[item.key()], item.value())) << item.key();
    }
    if (affine) {
      at::NoGradGuard no_grad;
      ours->weight.normal_();
      ours->bias.normal_();
      theirs->weight.copy_(ours->weight);
      theirs->bias.copy_(ours->bias);
    }
    const at::Tensor x = at::randn({4, 9, 32});
    EXPECT_TRUE(at::allclose(ours->forward(x), theirs->forward(x), 1e-5, 1e-5));
  }
}

}  // namespace
}  // namespace lrb
