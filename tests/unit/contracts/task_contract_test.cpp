// Every registered task keeps the Task contract: its splits have the shape, dtype and label
// range its description promises, the same (task, options, seq_len, seed) gives the same
// bytes, another seed gives other data, and a golden SHA-256 of a small split notices any
// change of generator (update the constant only for an intended change, and say so).
#include <gtest/gtest.h>

#include <ATen/Parallel.h>

#include "suite/core/sha256.h"
#include "suite/contracts/metrics.h"
#include "tests/support/task_test_util.h"

namespace lrb {
namespace {

struct Case {
  std::string task;
  json options;
  std::int64_t seq_len;
  std::string golden;  // sha256 of train x, train y, eval x, eval y bytes (seed 12345)
};

const std::vector<Case>& cases() {
  static const std::vector<Case> c = {
      {"listops", {{"train_size", 6}}, 64,
       "3ca79b3f6e1d2dc845b8160a514abd1df362b061ab50c84eacba827811c1ca05"},
      {"pathfinder", {{"train_size", 6}}, 0,
       "1d13f740cc1d2d868f677b61ebf6cac79a1b0bca26f675924f086c135cd5a9e4"},
      {"pathx", {{"train_size", 2}, {"view", "grid"}}, 0,
       "9c8731213773042cb8167238da07a68781ff1b1c68f68afdb6b64e476ea1a60e"},
      {"fashion-mnist", {{"train_size", 6}, {"view", "sequence"}, {"permute", true}}, 0,
       "a46ca21db89b412975e5186392a148fb62a4e1f6dbd38c0a9a762bc766ca4354"},
      {"wingbeat", {{"train_size", 6}}, 256,
       "09299f2e468cf0a4bee9a983333fcc4c899f53da65d6eb053fd9263b35c85ed3"},
      {"audio", {{"train_size", 4}, {"sample_rate", 8000.0}, {"duration", 0.256}, {"n_fft", 64}, {"hop", 32}}, 0,
       "bb7656458f259d11d514d44f6821041d8a8e0e4407612616fe5b42ff875b5a06"},
      {"retrieval", {{"train_size", 6}}, 64,
       "faca1140ff15c87327cfa2a193764f0fc316fdc3a2a23a58a9fea4e7882433be"},
      {"multilabel-docs", {{"train_size", 6}}, 64,
       "eee418acf137aef835b165392ab0c6ea657adcf79e97439349bee2dba2b2efa8"},
  };
  return c;
}

std::string digest(const TaskData& d) {
  return sha256_hex(testing::tensor_bytes(d.train.x) + testing::tensor_bytes(d.train.y) +
                    testing::tensor_bytes(d.eval.x) + testing::tensor_bytes(d.eval.y));
}

void check_split(const Split& s, const TaskInfo& info, std::int64_t n, const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_EQ(s.x.size(0), n);
  ASSERT_EQ(s.y.size(0), n);
  std::vector<std::int64_t> want{n};
  want.insert(want.end(), info.input_shape.begin(), info.input_shape.end());
  EXPECT_EQ(s.x.sizes().vec(), want);
  EXPECT_TRUE(s.x.is_contiguous());
  if (n == 0) return;
  if (info.modality == Modality::Tokens) {
    ASSERT_EQ(s.x.scalar_type(), at::kLong);
    EXPECT_GE(s.x.min().item<std::int64_t>(), 0);
    EXPECT_LT(s.x.max().item<std::int64_t>(), info.vocab_size);
  } else {
    ASSERT_EQ(s.x.scalar_type(), at::kFloat);
    EXPECT_TRUE(at::isfinite(s.x).all().item<bool>());
  }
  if (info.multilabel) {
    ASSERT_EQ(s.y.sizes(), (at::IntArrayRef{n, info.num_classes}));
    EXPECT_EQ(s.y.scalar_type(), at::kFloat);
    EXPECT_TRUE((s.y.eq(0) | s.y.eq(1)).all().item<bool>());
  } else {
    ASSERT_EQ(s.y.dim(), 1);
    ASSERT_EQ(s.y.scalar_type(), at::kLong);
    EXPECT_GE(s.y.min().item<std::int64_t>(), 0);
    EXPECT_LT(s.y.max().item<std::int64_t>(), info.num_classes);
  }
}

}  // namespace

TEST(TaskContract, EveryTaskIsCovered) {
  // A new task joins this test (and its golden checksum) or is a file task that needs paths.
  for (const auto& name : TaskRegistry::instance().names()) {
    if (name == "idx-file" || name == "timeseries-file" || name == "hdf5-file") continue;
    if (!TaskRegistry::instance().find(name)->make) continue;  // test-only entries (config_test's golden task)
    bool found = false;
    for (const auto& c : cases()) found |= c.task == name;
    EXPECT_TRUE(found) << "task '" << name << "' has no case in task_contract_test.cpp";
  }
}

TEST(TaskContract, ShapesDeterminismAndGoldenChecksums) {
  for (const auto& c : cases()) {
    SCOPED_TRACE(c.task);
    const TaskEntry* e = TaskRegistry::instance().find(c.task);
    ASSERT_NE(e, nullptr);
    // Defaults resolve (what `lrbench list` shows) and every metric is in the table.
    const json defaults = e->schema.defaults(json{{"seq_len", c.seq_len > 0 ? c.seq_len : 1024}});
    for (const auto& spec : e->schema.options) EXPECT_FALSE(spec.help.empty()) << spec.name;
    EXPECT_TRUE(defaults.contains("metrics"));
    const TaskInfo info = testing::describe_task(c.task, c.options, c.seq_len);
    ASSERT_FALSE(info.metrics.empty());
    for (const auto& m : info.metrics) {
      ASSERT_NE(find_metric(m), nullptr) << m;
      EXPECT_EQ(find_metric(m)->multilabel, info.multilabel) << m;
    }
    EXPECT_EQ(TaskInfo::from_json(info.to_json()).to_json(), info.to_json());

    const std::int64_t n_train = c.options["train_size"].get<std::int64_t>(), n_eval = 3;
    const TaskData a = testing::generate_task(c.task, c.options, c.seq_len, 12345, n_eval);
    check_split(a.train, info, n_train, "train");
    check_split(a.eval, info, n_eval, "eval");
    const TaskData b = testing::generate_task(c.task, c.options, c.seq_len, 12345, n_eval);
    EXPECT_EQ(digest(a), digest(b)) << "same request, different bytes";
    // Samples come from their own streams, so thread count does not matter.
    const int threads = at::get_num_threads();
    at::set_num_threads(threads == 1 ? 2 : 1);
    const TaskData c2 = testing::generate_task(c.task, c.options, c.seq_len, 12345, n_eval);
    at::set_num_threads(threads);
    EXPECT_EQ(digest(a), digest(c2)) << "thread count changed the bytes";
    // An empty evaluation split is allowed.
    const TaskData none = testing::generate_task(c.task, c.options, c.seq_len, 12345, 0);
    check_split(none.eval, info, 0, "empty eval");
    const TaskData other = testing::generate_task(c.task, c.options, c.seq_len, 54321, n_eval);
    EXPECT_FALSE(at::equal(a.train.x, other.train.x)) << "another seed gave the same training data";
    if (!c.golden.empty()) {
      EXPECT_EQ(digest(a), c.golden) << "the generator's output changed";
    }
  }
}

TEST(TaskContract, EvalDoesNotDependOnTrainSize) {
  // Per-split streams: the evaluation set stays put when train_size changes.
  for (const std::string task : {"pathfinder", "wingbeat", "retrieval", "multilabel-docs"}) {
    const std::int64_t L = task == "pathfinder" ? 0 : 64;
    const auto a = testing::generate_task(task, {{"train_size", 4}}, L, 7, 5);
    const auto b = testing::generate_task(task, {{"train_size", 9}}, L, 7, 5);
    EXPECT_TRUE(at::equal(a.eval.x, b.eval.x)) << task;
    // Without class balancing the training set grows by appending.
    if (task == "retrieval" || task == "multilabel-docs") {
      EXPECT_TRUE(at::equal(a.train.x, b.train.x.narrow(0, 0, 4))) << task;
    }
  }
}

}  // namespace lrb
