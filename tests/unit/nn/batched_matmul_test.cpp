#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>

#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "suite/nn/batched_matmul.h"
#include "suite/runtime/torch_compat_autocast.h"
#include "tests/support/attention_test_util.h"

namespace lrb {
namespace {

// One pair of operands as a kernel hands them over: made by `make` from float64 leaves.
struct Case {
  std::string name;
  std::vector<std::int64_t> a_shape, b_shape;
  std::function<at::Tensor(const at::Tensor&)> view_a, view_b;  // contiguous leaf -> the operand
};

at::Tensor same(const at::Tensor& t) { return t; }
at::Tensor transposed(const at::Tensor& t) { return t.transpose(-2, -1); }

std::vector<Case> cases() {
  return {
      {"contiguous", {2, 3, 5, 4}, {2, 3, 4, 6}, same, same},
      {"a transposed", {2, 3, 4, 5}, {2, 3, 4, 6}, transposed, same},
      {"b transposed (q k^T)", {2, 3, 5, 4}, {2, 3, 6, 4}, same, transposed},
      {"both transposed", {2, 4, 5}, {6, 4}, transposed, transposed},
      // a row slice of a wider matrix: leading dimension larger than the row
      {"narrowed columns", {3, 5, 9}, {3, 4, 2}, [](const at::Tensor& t) { return t.narrow(-1, 2, 4); }, same},
      // heads taken from a packed [B, N, H, d] projection, as the encoder layer does
      {"permuted heads", {2, 7, 3, 4}, {2, 3, 4, 7},
       [](const at::Tensor& t) { return t.permute({0, 2, 1, 3}); }, same},
      {"b broadcast over blocks", {2, 3, 4, 5}, {2, 1, 5, 6}, same, same},
      {"a broadcast over batch", {1, 3, 4, 5}, {2, 3, 5, 6}, same, same},
      {"both broadcast", {2, 1, 4, 5}, {1, 3, 5, 6}, same, same},
      {"stride-0 matrix (copied first)", {2, 1, 5}, {2, 5, 3},
       [](const at::Tensor& t) { return t.expand({2, 4, 5}); }, same},
      {"vectors (m = n = 1)", {3, 1, 5}, {3, 5, 1}, same, same},
      {"one-row operand, odd strides", {3, 8, 5}, {3, 5, 2},
       [](const at::Tensor& t) { return t.narrow(-2, 3, 1); }, same},
  };
}

at::Tensor make_leaf(const std::vector<std::int64_t>& shape) {
  return at::randn(shape, at::kDouble).set_requires_grad(true);
}

TEST(BatchedMatmul, TheProcessHasTheBlasItCalls) {
  // Debian's LibTorch loads libblas.so.3 (OpenBLAS or the reference): the fast path is on.
  // PyTorch's own LibTorch links its BLAS in privately: at::matmul there.
  std::ifstream maps("/proc/self/maps");
  const std::string loaded((std::istreambuf_iterator<char>(maps)), std::istreambuf_iterator<char>());
  if (loaded.find("libblas.so") == std::string::npos && loaded.find("libopenblas") == std::string::npos)
    GTEST_SKIP() << "this LibTorch loads no shared BLAS library";
  EXPECT_TRUE(batched_matmul_has_blas());
}

TEST(BatchedMatmul, ValuesAndGradientsMatchAtMatmulOnEveryLayout) {
  at::manual_seed(7);
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const at::Tensor a = make_leaf(c.a_shape), b = make_leaf(c.b_shape);
    const at::Tensor ours = batched_matmul(c.view_a(a), c.view_b(b));
    const at::Tensor ref = at::matmul(c.view_a(a), c.view_b(b));
    ASSERT_EQ(ours.sizes(), ref.sizes());
    EXPECT_LT(test::max_abs_diff(ours, ref), 1e-12);
    const at::Tensor w = at::randn(ref.sizes(), at::kDouble);
    const auto g_ours = torch::autograd::grad({(ours * w).sum()}, {a, b});
    const auto g_ref = torch::autograd::grad({(ref * w).sum()}, {a, b});
    EXPECT_LT(test::max_abs_diff(g_ours[0], g_ref[0]), 1e-12);
    EXPECT_LT(test::max_abs_diff(g_ours[1], g_ref[1]), 1e-12);
    // float32 takes the same path through sgemm_
    const at::Tensor af = c.view_a(a.detach().to(at::kFloat)), bf = c.view_b(b.detach().to(at::kFloat));
    EXPECT_LT(test::max_abs_diff(batched_matmul(af, bf).to(at::kDouble), ref.detach()), 1e-4);
  }
}

// A gradient comes in its operand's layout: for an operand that is a transposed view of a
// leaf (psi(K)^T in linear attention, K^T in q K^T), the leaf's gradient is contiguous, as
// LibTorch's mm gives it, so nothing after the product pays a strided pass.
TEST(BatchedMatmul, GradientsOfTransposedOperandsReachTheirLeavesContiguous) {
  at::manual_seed(9);
  for (const auto type : {at::kFloat, at::kDouble}) {
    const at::Tensor a = at::randn({2, 3, 7, 5}, type).requires_grad_(true);
    const at::Tensor b = at::randn({2, 3, 6, 7}, type).requires_grad_(true);
    const at::Tensor out = batched_matmul(a.transpose(-2, -1), b.transpose(-2, -1));
    const auto g = torch::autograd::grad({out.pow(2).sum()}, {a, b});
    EXPECT_TRUE(g[0].is_contiguous()) << at::toString(type);
    EXPECT_TRUE(g[1].is_contiguous()) << at::toString(type);
    const at::Tensor ad = a.detach().to(at::kDouble).requires_grad_(true);
    const at::Tensor bd = b.detach().to(at::kDouble).requires_grad_(true);
    const auto want = torch::autograd::grad({at::matmul(ad.transpose(-2, -1), bd.transpose(-2, -1)).pow(2).sum()},
                                            {ad, bd});
    const double tolerance = type == at::kDouble ? 1e-12 : 1e-4;
    EXPECT_LT(test::max_abs_diff(g[0].to(at::kDouble), want[0]), tolerance);
    EXPECT_LT(test::max_abs_diff(g[1].to(at::kDouble), want[1]), tolerance);
  }
}

TEST(BatchedMatmul, SecondDerivativesMatchAtMatmul) {
  at::manual_seed(8);
  const at::Tensor a = make_leaf({2, 3, 4}), b = make_leaf({1, 4, 5});
  auto second = [&](const std::function<at::Tensor(const at::Tensor&, const at::Tensor&)>& mm) {
    const auto g = torch::autograd::grad({mm(a, b).pow(2).sum()}, {a}, {}, /*retain_graph=*/true,
                                         /*create_graph=*/true);
    return torch::autograd::grad({g[0].sum()}, {b})[0];
  };
  EXPECT_LT(test::max_abs_diff(second(batched_matmul), second([](auto& x, auto& y) { return at::matmul(x, y); })), 1e-12);
}

TEST(BatchedMatmul, EmptyDimensionsGiveWhatAtMatmulGives) {
  for (const auto& [as, bs] : std::vector<std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>>>{
           {{2, 3, 0}, {2, 0, 4}}, {{2, 0, 3}, {2, 3, 4}}, {{2, 3, 2}, {2, 2, 0}}, {{0, 3, 2}, {1, 2, 4}}}) {
    const at::Tensor a = at::randn(as), b = at::randn(bs);
    const at::Tensor ours = batched_matmul(a, b), ref = at::matmul(a, b);
    ASSERT_EQ(ours.sizes(), ref.sizes());
    if (ref.numel() > 0) {
      EXPECT_EQ(test::max_abs_diff(ours, ref), 0);  // k = 0: zeros, never uninitialised memory
    }
  }
}

TEST(BatchedMatmul, AccumulateAddsEachProductInBatchOrderIntoOverlappingViews) {
  // A sliding window's key gradients: windows of L rows every b rows of a [B, H, Ns, d]
  // source overlap, and each window's product adds to what the ones before it left.
  at::manual_seed(61);
  for (const auto type : {at::kFloat, at::kDouble}) {
    SCOPED_TRACE(type == at::kFloat ? "float32" : "float64");
    const std::int64_t B = 2, H = 3, L = 7, b = 3, windows = 5, d = 4, k = 6, Ns = (windows - 1) * b + L;
    const at::Tensor src = at::randn({B, H, Ns, d}, type);
    at::Tensor got = src.clone();
    // a as a transposed view, b broadcast over the heads.
    const at::Tensor a = at::randn({B, H, windows, k, L}, type).transpose(-2, -1);
    const at::Tensor bm = at::randn({B, 1, windows, k, d}, type);
    at::Tensor view = got.unfold(2, L, b).transpose(-1, -2);  // [B, H, windows, L, d]
    ASSERT_TRUE(batched_matmul_accumulate_applies(view, a, bm));
    batched_matmul_accumulate(view, a, bm);
    at::Tensor want = src.to(at::kDouble);
    for (std::int64_t j = 0; j < windows; ++j)
      want.narrow(2, j * b, L).add_(at::matmul(a.select(2, j).to(at::kDouble), bm.select(2, j).to(at::kDouble)));
    EXPECT_LT(test::max_abs_diff(got, want), type == at::kFloat ? 1e-5 : 1e-12);

    // A contiguous out with one-row matrices (BLAS's leading dimension from the row length).
    at::Tensor rows = at::randn({4, 1, 5}, type);
    const at::Tensor before = rows.clone();
    const at::Tensor ra = at::randn({4, 1, 3}, type), rb = at::randn({4, 3, 5}, type);
    batched_matmul_accumulate(rows, ra, rb);
    EXPECT_LT(test::max_abs_diff(rows, before + at::matmul(ra, rb)), 1e-5);
  }
}

TEST(BatchedMatmul, AccumulateTakesOnlyWhatBlasCanAddInto) {
  const at::Tensor a = at::randn({2, 3, 4}), b = at::randn({2, 4, 5});
  EXPECT_TRUE(batched_matmul_accumulate_applies(at::zeros({2, 3, 5}), a, b));
  EXPECT_FALSE(batched_matmul_accumulate_applies(at::zeros({1, 3, 5}), a, b)) << "a broadcast out";
  EXPECT_FALSE(batched_matmul_accumulate_applies(at::zeros({2, 5, 3}).transpose(1, 2), a, b)) << "columns";
  EXPECT_FALSE(batched_matmul_accumulate_applies(at::zeros({2, 3, 5}, at::kDouble), a, b)) << "another type";
  EXPECT_FALSE(batched_matmul_accumulate_applies(at::zeros({2, 3, 6}), a, b)) << "another shape";
  EXPECT_FALSE(batched_matmul_accumulate_applies(at::zeros({2, 3, 5}, at::kBFloat16), a.to(at::kBFloat16),
                                                 b.to(at::kBFloat16)));
  torch_compat::set_autocast_enabled(at::kCPU, true);
  const bool under_autocast = batched_matmul_accumulate_applies(at::zeros({2, 3, 5}), a, b);
  torch_compat::set_autocast_enabled(at::kCPU, false);
  EXPECT_FALSE(under_autocast);
  // Not while autograd records an operand (a backward run with create_graph).
  const at::Tensor leaf = a.clone().requires_grad_(true);
  EXPECT_FALSE(batched_matmul_accumulate_applies(at::zeros({2, 3, 5}), leaf, b));
  {
    at::NoGradGuard no_grad;
    EXPECT_TRUE(batched_matmul_accumulate_applies(at::zeros({2, 3, 5}), leaf, b));
  }
  at::Tensor out = at::zeros({2, 3, 5});
  EXPECT_DEATH(batched_matmul_accumulate(out, a, at::randn({2, 4, 6})), "outside its path");
}

TEST(BatchedMatmul, OutsideItsFastPathItIsAtMatmul) {
  // Mismatched shapes: at::matmul's own error.
  EXPECT_THROW(batched_matmul(at::randn({2, 3, 4}), at::randn({2, 5, 6})), c10::Error);
  EXPECT_THROW(batched_matmul(at::randn({2, 3, 4}), at::randn({3, 4, 6})), c10::Error);
  // Other dtypes and ranks: at::matmul's result.
  const at::Tensor ai = at::randint(5, {2, 3, 4}, at::kLong), bi = at::randint(5, {2, 4, 2}, at::kLong);
  EXPECT_TRUE(batched_matmul(ai, bi).equal(at::matmul(ai, bi)));
  const at::Tensor a2 = at::randn({3, 4}), b3 = at::randn({2, 4, 5});
  EXPECT_LT(test::max_abs_diff(batched_matmul(a2, b3), at::matmul(a2, b3)), 1e-6);
  // Under CPU autocast the product runs in the autocast type, as at::matmul's does.
  const at::Tensor a = at::randn({2, 3, 4}), b = at::randn({2, 4, 5});
  torch_compat::set_autocast_enabled(at::kCPU, true);
  const at::Tensor under = batched_matmul(a, b), under_ref = at::matmul(a, b);
  const at::Tensor mm_under = at::mm(a[0], b[0]);
  torch_compat::set_autocast_enabled(at::kCPU, false);
  ASSERT_EQ(mm_under.scalar_type(), at::kBFloat16);  // autocast was on
  EXPECT_EQ(under.scalar_type(), under_ref.scalar_type());
  EXPECT_TRUE(under.equal(under_ref));
}

}  // namespace
}  // namespace lrb
