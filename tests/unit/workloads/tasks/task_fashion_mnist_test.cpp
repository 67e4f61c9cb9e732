#include <gtest/gtest.h>

#include <filesystem>

#include "tests/support/task_test_util.h"
#include "workloads/tasks/image_files.h"

namespace lrb {

namespace {
bool have_data() {
  return std::filesystem::exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz");
}
}  // namespace

TEST(TaskFashionMnist, ViewsSubsetsAndPermutation) {
  if (!have_data()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  const auto grid_info = testing::describe_task("fashion-mnist", json::object(), 0);
  EXPECT_EQ(grid_info.modality, Modality::Grid);
  EXPECT_EQ(grid_info.input_shape, (std::vector<std::int64_t>{1, 28, 28}));
  EXPECT_EQ(grid_info.num_classes, 10);
  const auto seq_info = testing::describe_task("fashion-mnist", {{"view", "sequence"}}, 0);
  EXPECT_EQ(seq_info.input_shape, (std::vector<std::int64_t>{784}));
  EXPECT_EQ(seq_info.vocab_size, 256);
  EXPECT_EQ(seq_info.pad_token, -1);

  const json grid = {{"train_size", 2000}};
  const auto a = testing::generate_task("fashion-mnist", grid, 0, 1, 500);
  ASSERT_EQ(a.train.x.sizes(), (at::IntArrayRef{2000, 1, 28, 28}));
  EXPECT_GE(a.train.x.min().item<float>(), 0.0f);
  EXPECT_LE(a.train.x.max().item<float>(), 1.0f);
  EXPECT_EQ(at::bincount(a.train.y).size(0), 10);
  // Real data: nearest centroid on raw pixels reaches about 0.68 on Fashion-MNIST.
  const double nc = testing::nearest_centroid_accuracy(a.train.x.reshape({2000, -1}), a.train.y,
                                                       a.eval.x.reshape({500, -1}), a.eval.y, 10);
  EXPECT_GT(nc, 0.55);
  EXPECT_LT(testing::constant_accuracy(a.train.y, a.eval.y, 10), 0.2);

  // The seed picks the training subset; eval is the same for every seed.
  const auto b = testing::generate_task("fashion-mnist", grid, 0, 2, 500);
  EXPECT_FALSE(at::equal(a.train.x, b.train.x));
  EXPECT_TRUE(at::equal(a.eval.x, b.eval.x));

  // The sequence view holds the same pixels as tokens; permute reorders positions by a
  // permutation fixed by permute_seed (the same for every run seed).
  const auto seq = testing::generate_task("fashion-mnist", {{"train_size", 10}, {"view", "sequence"}}, 0, 1, 50);
  EXPECT_TRUE(at::equal(seq.eval.x, a.eval.x.narrow(0, 0, 50).reshape({50, -1}).mul(255).round().to(at::kLong)));
  const json perm_opts = {{"train_size", 10}, {"view", "sequence"}, {"permute", true}};
  const auto p1 = testing::generate_task("fashion-mnist", perm_opts, 0, 1, 50);
  const auto p2 = testing::generate_task("fashion-mnist", perm_opts, 0, 2, 50);
  EXPECT_TRUE(at::equal(p1.eval.x, p2.eval.x));
  const auto perm = pixel_permutation(784, 0);
  EXPECT_TRUE(at::equal(p1.eval.x, seq.eval.x.index_select(1, at::tensor(perm, at::kLong))));
  EXPECT_FALSE(at::equal(p1.eval.x, seq.eval.x));
  json other = perm_opts;
  other["permute_seed"] = 1;
  EXPECT_FALSE(at::equal(testing::generate_task("fashion-mnist", other, 0, 1, 50).eval.x, p1.eval.x));
}

TEST(TaskFashionMnist, UserErrors) {
  if (!have_data()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  try {
    testing::generate_task("fashion-mnist", {{"train_size", 10}}, 0, 1, 20000);
    ADD_FAILURE() << "eval_size above 10,000 accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("eval_size"), std::string::npos) << e.what();
  }
  try {
    testing::describe_task("fashion-mnist", {{"path", "/nonexistent/fmnist"}}, 0);
    ADD_FAILURE() << "missing folder accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("dataset-fashion-mnist"), std::string::npos) << e.what();
  }
}

}  // namespace lrb
