#include <gtest/gtest.h>

#include <cstdio>

#include "tests/unit/task_test_util.h"
#include "workloads/tasks/pathfinder.h"

namespace lrb {

TEST(TaskPathfinderScratch, Dump) {
  for (int size : {32, 128}) {
    const auto o = testing::task_options(size == 32 ? "pathfinder" : "pathx", json::object(), 0);
    const auto p = pathfinder_params(o, size);
    Rng rng(7);
    int restarts = 0;
    for (int i = 0; i < 3; ++i) {
      auto s = generate_pathfinder_sample(p, i % 2 == 0, rng);
      std::printf("label %lld paths %zu\n", (long long)s.label, s.paths.size());
      const int step = size == 32 ? 1 : 2;
      for (int y = 0; y < size; y += step) {
        for (int x = 0; x < size; x += step) {
          int v = s.pixels[y * size + x];
          std::putchar(v == 0 ? '.' : v < 128 ? '+' : '#');
        }
        std::putchar('\n');
      }
    }
    (void)restarts;
  }
}

}  // namespace lrb
