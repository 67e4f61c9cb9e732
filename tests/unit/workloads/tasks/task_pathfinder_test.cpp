#include <gtest/gtest.h>

#include <cmath>
#include <queue>

#include "tests/support/task_test_util.h"
#include "workloads/tasks/common.h"
#include "workloads/tasks/pathfinder.h"

namespace lrb {
namespace {

double dist(const Point& a, const Point& b) { return std::hypot(a[0] - b[0], a[1] - b[1]); }

double segment_dist(const Point& p, const Point& a, const Point& b) {
  const double dx = b[0] - a[0], dy = b[1] - a[1];
  double t = ((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / (dx * dx + dy * dy);
  t = std::max(0.0, std::min(1.0, t));
  return std::hypot(a[0] + t * dx - p[0], a[1] + t * dy - p[1]);
}

// 8-connected components of the inked pixels.
std::vector<int> components(const std::vector<std::uint8_t>& px, int n) {
  std::vector<int> comp(px.size(), -1);
  int next = 0;
  for (int s = 0; s < n * n; ++s) {
    if (!px[s] || comp[s] >= 0) continue;
    std::queue<int> q;
    q.push(s);
    comp[s] = next;
    while (!q.empty()) {
      const int p = q.front();
      q.pop();
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          const int y = p / n + dy, x = p % n + dx;
          if (y < 0 || x < 0 || y >= n || x >= n) continue;
          const int r = y * n + x;
          if (px[r] && comp[r] < 0) {
            comp[r] = next;
            q.push(r);
          }
        }
    }
    ++next;
  }
  return comp;
}

// Rebuilds sample i of the task's training split from its stream and checks it against
// the task's own output and the path records.
void check_records(const std::string& task, int size, const json& overrides, std::int64_t n, bool check_pixels) {
  const std::uint64_t seed = 2024;
  const auto o = testing::task_options(task, overrides, 0);
  const auto p = pathfinder_params(o, size);
  const auto d = testing::generate_task(task, overrides, 0, seed, 4);
  ASSERT_EQ(d.train.x.sizes(), (at::IntArrayRef{n, size * size}));
  const auto x = d.train.x.contiguous();
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t label = d.train.y[i].item<std::int64_t>();
    Rng rng(sample_seed(seed, SplitStream::Train, static_cast<std::uint64_t>(i)));
    const auto s = generate_pathfinder_sample(p, label == 1, rng);
    for (int k = 0; k < size * size; ++k) ASSERT_EQ(s.pixels[k], x[i][k].item<std::int64_t>()) << "image " << i;
    // The label is what the records say.
    EXPECT_EQ(label, s.marker_path[0] == s.marker_path[1] ? 1 : 0) << "image " << i;
    EXPECT_EQ(s.label, label);
    ASSERT_GE(s.paths.size(), 2u);
    EXPECT_EQ(static_cast<int>(s.paths[0].paddles.size()), p.contour_length);
    EXPECT_EQ(static_cast<int>(s.paths[1].paddles.size()), p.contour_length);
    for (std::size_t k = 2; k < s.paths.size(); ++k) {
      EXPECT_TRUE(s.paths[k].distractor);
      EXPECT_EQ(static_cast<int>(s.paths[k].paddles.size()), p.distractor_length);
    }
    for (int m = 0; m < 2; ++m) {
      const auto& own = s.paths[static_cast<std::size_t>(s.marker_path[m])];
      EXPECT_FALSE(own.distractor);
      // Each marker sits at an end of its path, visibly, and off every other path.
      EXPECT_LT(std::min(dist(s.markers[m], own.start()), dist(s.markers[m], own.end())), 1e-9);
      const int cx = static_cast<int>(std::lround(s.markers[m][0])), cy = static_cast<int>(std::lround(s.markers[m][1]));
      EXPECT_GE(s.pixels[cy * size + cx], 200);
      for (std::size_t k = 0; k < s.paths.size(); ++k) {
        if (static_cast<int>(k) == s.marker_path[m]) continue;
        for (const auto& seg : s.paths[k].paddles)
          EXPECT_GT(segment_dist(s.markers[m], seg[0], seg[1]), p.marker_radius + p.thickness / 2) << "image " << i;
      }
    }
    if (label == 1) {
      EXPECT_NE(s.markers[0], s.markers[1]);
    }
    if (check_pixels) {
      // Independently of the records: the markers are connected through inked pixels
      // exactly when the label says so.
      const auto comp = components(s.pixels, size);
      auto at_marker = [&](int m) {
        return comp[static_cast<int>(std::lround(s.markers[m][1])) * size + static_cast<int>(std::lround(s.markers[m][0]))];
      };
      EXPECT_EQ(at_marker(0) == at_marker(1), label == 1) << "image " << i;
    }
  }
}

}  // namespace

TEST(TaskPathfinder, BalancedLabels) {
  const auto d = testing::generate_task("pathfinder", {{"train_size", 200}}, 0, 5, 51);
  EXPECT_EQ(d.train.y.sum().item<std::int64_t>(), 100);
  const auto ones = d.eval.y.sum().item<std::int64_t>();
  EXPECT_TRUE(ones == 25 || ones == 26);
}

TEST(TaskPathfinder, LabelsMatchPathRecords) {
  check_records("pathfinder", 32, {{"train_size", 60}}, 60, true);
  check_records("pathfinder", 32, {{"train_size", 20}, {"difficulty", "easy"}}, 20, true);
}

TEST(TaskPathfinder, PathXLabelsMatchPathRecords) {
  check_records("pathx", 128, {{"train_size", 6}}, 6, false);
}

TEST(TaskPathfinder, ViewsAndOptions) {
  const auto info = testing::describe_task("pathfinder", json::object(), 0);
  EXPECT_EQ(info.modality, Modality::Tokens);
  EXPECT_EQ(info.input_shape, (std::vector<std::int64_t>{1024}));
  EXPECT_EQ(info.vocab_size, 256);
  EXPECT_EQ(info.pad_token, -1);
  EXPECT_EQ(info.num_classes, 2);
  const auto px = testing::describe_task("pathx", {{"view", "grid"}}, 0);
  EXPECT_EQ(px.modality, Modality::Grid);
  EXPECT_EQ(px.input_shape, (std::vector<std::int64_t>{1, 128, 128}));
  EXPECT_EQ(px.tokens(), 16384);

  const auto seq = testing::generate_task("pathfinder", {{"train_size", 8}}, 0, 3, 2);
  const auto grid = testing::generate_task("pathfinder", {{"train_size", 8}, {"view", "grid"}}, 0, 3, 2);
  ASSERT_EQ(grid.train.x.sizes(), (at::IntArrayRef{8, 1, 32, 32}));
  EXPECT_LE(grid.train.x.max().item<float>(), 1.0f);
  EXPECT_TRUE(at::equal(grid.train.x.reshape({8, -1}).mul(255).round().to(at::kLong), seq.train.x));

  // Difficulty: names or a number; numbers of the named settings get the name.
  EXPECT_EQ(testing::task_options("pathfinder", {{"difficulty", "9"}}, 0)["difficulty"], "medium");
  EXPECT_EQ(testing::task_options("pathfinder", {{"difficulty", "12"}}, 0)["difficulty"], "12");
  EXPECT_EQ(pathfinder_params(testing::task_options("pathfinder", {{"difficulty", "easy"}}, 0), 32).contour_length, 6);
  EXPECT_THROW(testing::task_options("pathfinder", {{"difficulty", "extreme"}}, 0), OptionError);
  EXPECT_THROW(testing::task_options("pathfinder", {{"difficulty", "1"}}, 0), OptionError);
  // LRA: distractor length contour // 3, 20 / that many distractors.
  const auto hard = pathfinder_params(testing::task_options("pathfinder", json::object(), 0), 32);
  EXPECT_EQ(hard.distractor_length, 4);
  EXPECT_EQ(hard.num_distractors, 5);
}

TEST(TaskPathfinder, ImpossibleGeometryIsAUserError) {
  PathfinderParams p;
  p.contour_length = 64;
  p.paddle_length = 8;
  Rng rng(1);
  EXPECT_THROW(generate_pathfinder_sample(p, true, rng), UserError);
}

}  // namespace lrb
