// lrb::dropout: the Philox mask's rate and scaling, its gradient, repeatability under a seed
// and any thread count, and the paths that return the input or hand over to at::dropout.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/utils.h>

#include <cmath>

#include "suite/nn/cpu/dropout.h"

namespace lrb {
namespace {

at::Tensor dropped(const at::Tensor& x, double p, std::uint64_t seed) {
  torch::manual_seed(seed);
  return lrb::dropout(x, p, true);
}

TEST(Dropout, KeepsOneMinusPOfTheElementsScaled) {
  const std::int64_t n = 1 << 20;
  const at::Tensor x = at::rand({n}, at::kFloat) + 0.5;  // never 0, so 0 means dropped
  for (const double p : {0.1, 0.5, 0.9}) {
    const at::Tensor y = dropped(x, p, 3);
    const at::Tensor kept = y != 0;
    const double rate = kept.to(at::kDouble).mean().item<double>();
    // The kept count is Binomial(n, 1 - p): within 6 standard deviations.
    EXPECT_NEAR(rate, 1.0 - p, 6.0 * std::sqrt(p * (1.0 - p) / n)) << "p = " << p;
    EXPECT_TRUE(at::allclose(y.masked_select(kept), x.masked_select(kept) / (1.0 - p), 1e-6, 0)) << "p = " << p;
  }
}

TEST(Dropout, NeighbouringElementsAreNotCorrelated) {
  // Four elements share one Philox block: the pairs inside it must be independent too.
  const at::Tensor kept = (dropped(at::ones({1 << 20}), 0.5, 11) != 0).to(at::kDouble).view({-1, 4});
  for (int a = 0; a < 4; ++a)
    for (int b = a + 1; b < 4; ++b) {
      const double both = (kept.select(1, a) * kept.select(1, b)).mean().item<double>();
      EXPECT_NEAR(both, 0.25, 6.0 * std::sqrt(0.25 * 0.75 / kept.size(0))) << a << "," << b;
    }
}

TEST(Dropout, GradientIsTheMaskTimesTheScale) {
  const at::Tensor x = (at::rand({64, 33}, at::kFloat) + 0.5).requires_grad_(true);
  const at::Tensor y = dropped(x, 0.3, 5);
  const at::Tensor g = at::randn({64, 33});
  y.backward(g);
  const at::Tensor expected = at::where(y != 0, g / 0.7, at::zeros_like(g));
  EXPECT_TRUE(at::allclose(x.grad(), expected, 1e-6, 1e-7));
}

TEST(Dropout, SameSeedSameMaskAtAnyThreadCount) {
  const at::Tensor x = at::rand({3, 1000, 37}, at::kFloat) + 0.5;
  const int threads = at::get_num_threads();
  at::set_num_threads(1);
  const at::Tensor one = dropped(x, 0.2, 42);
  at::set_num_threads(2);
  const at::Tensor two = dropped(x, 0.2, 42);
  at::set_num_threads(threads);
  EXPECT_TRUE(at::equal(one, two));
  EXPECT_FALSE(at::equal(one, dropped(x, 0.2, 43)));
  // Two calls under one seed draw two masks.
  torch::manual_seed(42);
  const at::Tensor first = lrb::dropout(x, 0.2, true), second = lrb::dropout(x, 0.2, true);
  EXPECT_FALSE(at::equal(first, second));
}

TEST(Dropout, NonContiguousAndBf16Inputs) {
  const at::Tensor x = (at::rand({40, 50}, at::kFloat) + 0.5).t();
  const at::Tensor y = dropped(x, 0.25, 9);
  EXPECT_EQ(y.sizes(), x.sizes());
  const at::Tensor kept = y != 0;
  EXPECT_TRUE(at::allclose(y.masked_select(kept), x.masked_select(kept) / 0.75, 1e-6, 0));
  const at::Tensor b = dropped(x.to(at::kBFloat16), 0.25, 9);
  EXPECT_EQ(b.scalar_type(), at::kBFloat16);
  EXPECT_TRUE(at::equal(b != 0, kept));  // the same draws: the mask does not depend on the type
}

TEST(Dropout, Float64KeepsItsPrecision) {
  const at::Tensor x = at::rand({4096}, at::kDouble) + 0.5;
  const at::Tensor y = dropped(x, 0.3, 13);
  const at::Tensor kept = y != 0;
  EXPECT_TRUE(at::allclose(y.masked_select(kept), x.masked_select(kept) / 0.7, 1e-15, 0));
}

TEST(Dropout, IdentityWhenNotTrainingOrPIsZero) {
  const at::Tensor x = at::randn({8, 8});
  EXPECT_TRUE(lrb::dropout(x, 0.5, false).is_same(x));
  EXPECT_TRUE(lrb::dropout(x, 0.0, true).is_same(x));
  EXPECT_TRUE(at::equal(lrb::dropout(x.abs() + 1, 1.0, true), at::zeros_like(x)));
  Dropout module(0.5);
  module->eval();
  EXPECT_TRUE(module->forward(x).is_same(x));
  module->train();
  EXPECT_FALSE(at::equal(module->forward(x), x));
}

}  // namespace
}  // namespace lrb
