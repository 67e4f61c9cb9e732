#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <limits>

#include "suite/contracts/metrics.h"
#include "tests/support/task_test_util.h"

namespace lrb {
namespace {

at::Tensor mat(std::vector<std::vector<float>> rows) {
  const auto n = static_cast<std::int64_t>(rows.size()), k = static_cast<std::int64_t>(rows[0].size());
  auto t = at::empty({n, k}, at::kFloat);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < k; ++j) t[i][j] = rows[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)];
  return t;
}

}  // namespace

TEST(MetricSingleLabel, HandComputed) {
  const auto logits = mat({{2, 1, 0}, {0, 3, 1}, {1, 0, 5}, {0.5f, 0.2f, 0.1f}});
  const auto y = at::tensor({0, 2, 2, 1}, at::kLong);
  EXPECT_DOUBLE_EQ(compute_metric("accuracy", logits, y), 0.5);
  // F1 per class: 0 -> 2/3 (pred {0,3}, true {0}); 1 -> 0; 2 -> 2/3 (pred {2}, true {1,2}).
  EXPECT_NEAR(compute_metric("macro_f1", logits, y), (2.0 / 3 + 0 + 2.0 / 3) / 3, 1e-12);
}

TEST(MetricTopK, HandComputed) {
  // Class 3 is 4th of 5 in row 0 (miss); class 2 is 3rd in row 1 (hit).
  const auto five = mat({{5, 4, 3, 2, 1}, {1, 2, 3, 4, 5}});
  EXPECT_DOUBLE_EQ(compute_metric("top3", five, at::tensor({3, 2}, at::kLong)), 0.5);
  EXPECT_DOUBLE_EQ(compute_metric("top3", five, at::tensor({0, 4}, at::kLong)), 1.0);
  // Six classes: class 0 is last (miss), class 1 is 5th (hit).
  const auto six = mat({{0, 1, 2, 3, 4, 5}, {0, 1, 2, 3, 4, 5}});
  EXPECT_DOUBLE_EQ(compute_metric("top5", six, at::tensor({0, 1}, at::kLong)), 0.5);
}

TEST(MetricMultiLabel, ExampleBasedAndMicroF1) {
  const auto logits = mat({{1, -1, 2, -3}, {-1, -1, -1, -1}, {0, 3, -2, 1}});
  const auto y = mat({{1, 1, 0, 0}, {0, 0, 0, 0}, {1, 1, 0, 1}});
  // Doc 0: pred {0,2}, true {0,1}: 2*1/4. Doc 1: both empty: 1. Doc 2: pred {1,3} (a
  // logit of 0 is "no"), true {0,1,3}: 2*2/5.
  EXPECT_NEAR(compute_metric("ebf", logits, y), (0.5 + 1.0 + 0.8) / 3, 1e-12);
  // TP = 3, predicted 4, true 5: 2*3/9.
  EXPECT_NEAR(compute_metric("micro_f1", logits, y), 6.0 / 9, 1e-12);
  // Nothing predicted, something true: 0. Nothing anywhere: 1.
  const auto none = mat({{-1, -1}});
  EXPECT_DOUBLE_EQ(compute_metric("ebf", none, mat({{1, 0}})), 0.0);
  EXPECT_DOUBLE_EQ(compute_metric("micro_f1", none, mat({{1, 0}})), 0.0);
  EXPECT_DOUBLE_EQ(compute_metric("micro_f1", none, mat({{0, 0}})), 1.0);
}

TEST(MetricTable, KindsAndUnknown) {
  ASSERT_NE(find_metric("ebf"), nullptr);
  EXPECT_TRUE(find_metric("ebf")->multilabel);
  EXPECT_TRUE(find_metric("micro_f1")->multilabel);
  EXPECT_FALSE(find_metric("top5")->multilabel);
  EXPECT_EQ(find_metric("top5")->top_k, 5);
  EXPECT_THROW(compute_metric("nope", mat({{1}}), at::tensor({0}, at::kLong)), std::invalid_argument);
}

// What the runner fails a run with instead of scoring logits that are not numbers.
TEST(MetricTable, NonFiniteLogitsAreNamedWithTheFirst) {
  at::Tensor logits = at::zeros({3, 4});
  EXPECT_EQ(non_finite_logits_problem(logits), "");
  logits[1][2] = std::numeric_limits<float>::quiet_NaN();
  logits[2][0] = -std::numeric_limits<float>::infinity();
  EXPECT_EQ(non_finite_logits_problem(logits), "2 of 12 logits are NaN or infinite (the first at [1, 2])");
}

TEST(MetricOption, ValidatedThroughTheSchema) {
  using testing::describe_task;
  using testing::task_options;
  // Order is kept: the first is the primary metric.
  EXPECT_EQ(describe_task("retrieval", {{"metrics", "top5, accuracy"}}, 64).metrics,
            (std::vector<std::string>{"top5", "accuracy"}));
  EXPECT_EQ(describe_task("multilabel-docs", json::object(), 64).metrics, (std::vector<std::string>{"ebf", "micro_f1"}));
  EXPECT_EQ(describe_task("listops", json::object(), 64).metrics, (std::vector<std::string>{"accuracy", "macro_f1"}));
  auto fails = [](const std::string& task, const std::string& metrics, const std::string& needle) {
    try {
      task_options(task, {{"metrics", metrics}}, 64);
      ADD_FAILURE() << metrics << " accepted";
    } catch (const OptionError& e) {
      EXPECT_EQ(e.options.at(0), "metrics");
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  fails("retrieval", "acuracy", "did you mean 'accuracy'");
  fails("retrieval", "ebf", "multi-label");
  fails("multilabel-docs", "accuracy", "single-label");
  fails("retrieval", "top10", "more than 10 classes");  // num_values 10
  fails("retrieval", "accuracy,accuracy", "twice");
  fails("retrieval", "accuracy,", "empty name");
  EXPECT_NO_THROW(task_options("retrieval", {{"metrics", "top10"}, {"num_values", 100}}, 64));
  // A list for `metrics` is not a sweep axis.
  EXPECT_FALSE(TaskRegistry::instance().find("retrieval")->schema.find("metrics")->axis);
}

}  // namespace lrb
