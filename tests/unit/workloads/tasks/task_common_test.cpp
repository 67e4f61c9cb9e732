#include <gtest/gtest.h>

#include <ATen/Parallel.h>

#include <cmath>

#include "tests/support/task_test_util.h"
#include "workloads/tasks/common.h"

namespace lrb {

TEST(TaskCommon, PortableSineMatchesLibm) {
  Rng rng(3);
  double worst = 0;
  for (int i = 0; i < 200000; ++i) {
    const double x = (rng.uniform() * 2 - 1) * (i % 2 ? 10.0 : 2e5);
    worst = std::max({worst, std::fabs(psin(x) - std::sin(x)), std::fabs(pcos(x) - std::cos(x))});
  }
  EXPECT_LT(worst, 1e-13);
  EXPECT_EQ(psin(0.0), 0.0);
  EXPECT_EQ(pcos(0.0), 1.0);
}

TEST(TaskCommon, NoiseAndLabels) {
  Rng rng(5);
  double s = 0, s2 = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const double v = noise_normal(rng);
    s += v;
    s2 += v * v;
  }
  EXPECT_NEAR(s / n, 0.0, 0.01);
  EXPECT_NEAR(s2 / n, 1.0, 0.01);
  const auto y = balanced_labels(17, 5, rng);
  std::vector<int> counts(5, 0);
  for (auto v : y) counts[static_cast<std::size_t>(v)]++;
  for (int c : counts) EXPECT_TRUE(c == 3 || c == 4);
  EXPECT_NE(sample_seed(1, SplitStream::Train, 0), sample_seed(1, SplitStream::Eval, 0));
  EXPECT_NE(sample_seed(1, SplitStream::Train, 0), sample_seed(1, SplitStream::Train, 1));
}

TEST(TaskCommon, UserErrorsSurviveParallelGeneration) {
  const int threads = at::get_num_threads();
  at::set_num_threads(2);
  EXPECT_THROW(testing::generate_task("pathfinder", {{"train_size", 4}, {"difficulty", "64"}, {"paddle_length", 8.0}}, 0, 1, 0),
               UserError);
  at::set_num_threads(threads);
}

}  // namespace lrb
