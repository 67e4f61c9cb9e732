#include <gtest/gtest.h>

#include <set>

#include "tests/support/task_test_util.h"

namespace lrb {
namespace {

// An evaluator written from the spec alone: tokens 0 pad, 1..10 digits 0..9, 11 [MIN,
// 12 [MAX, 13 [MED, 14 [SM, 15 ]. Parses the prefix expression and computes its value.
struct Evaluator {
  const std::int64_t* t;
  std::int64_t n, pos = 0;
  bool ok = true;

  int expr() {
    if (pos >= n) return fail();
    const std::int64_t tok = t[pos++];
    if (tok >= 1 && tok <= 10) return static_cast<int>(tok - 1);
    if (tok < 11 || tok > 14) return fail();
    std::vector<int> args;
    while (pos < n && t[pos] != 15) args.push_back(expr());
    if (pos >= n || args.size() < 2) return fail();
    ++pos;  // ']'
    std::sort(args.begin(), args.end());
    switch (tok) {
      case 11: return args.front();
      case 12: return args.back();
      case 13: {
        const std::size_t k = args.size();
        return k % 2 ? args[k / 2] : (args[k / 2 - 1] + args[k / 2]) / 2;  // median, rounded down
      }
      default: {
        int s = 0;
        for (int a : args) s += a;
        return s % 10;
      }
    }
  }
  int fail() {
    ok = false;
    pos = n;
    return 0;
  }
};

}  // namespace

TEST(TaskListOps, LabelsLengthsAndNoDuplicates) {
  const std::int64_t seq_len = 128;
  const auto d = testing::generate_task("listops", {{"train_size", 300}}, seq_len, 99, 100);
  const auto o = testing::task_options("listops", json::object(), seq_len);
  const auto lo = o["min_length"].get<std::int64_t>(), hi = o["max_length"].get<std::int64_t>();
  std::set<std::vector<std::int64_t>> seen;
  for (const Split* s : {&d.train, &d.eval}) {
    ASSERT_EQ(s->x.size(1), seq_len);
    const auto x = s->x.contiguous();
    for (std::int64_t i = 0; i < s->size(); ++i) {
      const std::int64_t* row = x.data_ptr<std::int64_t>() + i * seq_len;
      std::int64_t len = 0;
      while (len < seq_len && row[len] != 0) ++len;
      for (std::int64_t j = len; j < seq_len; ++j) ASSERT_EQ(row[j], 0) << "padding only at the end";
      EXPECT_GT(len, lo);
      EXPECT_LT(len, hi);
      Evaluator ev{row, len};
      const int v = ev.expr();
      ASSERT_TRUE(ev.ok && ev.pos == len) << "sample " << i << " is not one well-formed expression";
      EXPECT_EQ(v, s->y[i].item<std::int64_t>()) << "sample " << i;
      EXPECT_TRUE(seen.insert(std::vector<std::int64_t>(row, row + len)).second) << "duplicate expression";
    }
  }
  // Labels are spread over the classes (not one value).
  EXPECT_GE(at::bincount(d.train.y).gt(0).sum().item<std::int64_t>(), 5);
}

}  // namespace lrb
