#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tests/support/task_test_util.h"
#include "workloads/loaders/ucr.h"

namespace lrb {
namespace {

namespace fs = std::filesystem;

class LoaderUcr : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("lrb_ucr_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) const {
    const auto p = (dir_ / name).string();
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  template <class F>
  static void expect_user_error(F&& f, std::vector<std::string> needles) {
    try {
      f();
      ADD_FAILURE() << "no error";
    } catch (const UserError& e) {
      for (const auto& n : needles) EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << e.what();
    }
  }
  fs::path dir_;
};

const char* kHeader =
    "# a comment\n"
    "@problemName Toy\n"
    "@timeStamps false\n"
    "@missing false\n"
    "@univariate true\n"
    "@equalLength true\n"
    "@seriesLength 4\n"
    "@classLabel true low high\n"
    "@data\n";

}  // namespace

TEST_F(LoaderUcr, TsRoundTrip) {
  const auto p = write("toy.ts", std::string(kHeader) +
                                     "1.0,2.0,3.0,4.0:low\n"
                                     "-1.5,+2.5e1,0,1e-3:high\r\n"
                                     "\n"
                                     "0.5,0.5,0.5,0.5:low\n");
  const SeriesSet s = read_ts(p);
  ASSERT_EQ(s.x.sizes(), (at::IntArrayRef{3, 4, 1}));
  EXPECT_EQ(s.x[1][1][0].item<float>(), 25.0f);
  EXPECT_EQ(s.x[1][3][0].item<float>(), 1e-3f);
  EXPECT_EQ(s.class_names, (std::vector<std::string>{"low", "high"}));
  EXPECT_EQ(label_ids(s, s.class_names), (std::vector<std::int64_t>{0, 1, 0}));
  EXPECT_EQ(s.lines, (std::vector<std::int64_t>{10, 11, 13}));
  // Multivariate: dimensions separated by ':' become channels.
  const auto m = write("multi.ts",
                       "@problemName M\n@univariate false\n@dimensions 2\n@classLabel true a b\n@data\n"
                       "1,2,3:4,5,6:a\n7,8,9:10,11,12:b\n");
  const SeriesSet ms = read_series_file(m);
  ASSERT_EQ(ms.x.sizes(), (at::IntArrayRef{2, 3, 2}));
  EXPECT_EQ(ms.x[0][2][0].item<float>(), 3.0f);
  EXPECT_EQ(ms.x[0][2][1].item<float>(), 6.0f);
  EXPECT_EQ(ms.x[1][0][1].item<float>(), 10.0f);
}

TEST_F(LoaderUcr, TsBadInput) {
  const std::string h = kHeader;
  // Non-numeric value: names file and line (line 11 = second case).
  const auto bad = write("bad.ts", h + "1,2,3,4:low\n1,2,abc,4:high\n");
  expect_user_error([&] { read_ts(bad); }, {bad + ":11", "value 3", "not a number", "'abc'"});
  expect_user_error([&] { read_ts(write("miss.ts", h + "1,?,3,4:low\n")); }, {"miss.ts:10", "missing"});
  expect_user_error([&] { read_ts(write("nan.ts", h + "1,NaN,3,4:low\n")); }, {"nan.ts:10", "finite"});
  expect_user_error([&] { read_ts(write("label.ts", h + "1,2,3,4:low\n1,2,3,4:medium\n")); },
                    {"label.ts:11", "'medium'", "low, high"});
  expect_user_error([&] { read_ts(write("len.ts", h + "1,2,3,4:low\n1,2,3:low\n")); }, {"len.ts:11", "3 values", "equal"});
  expect_user_error([&] { read_ts(write("dims.ts", h + "1,2,3,4:5,6,7,8:low\n")); }, {"dims.ts:10", "2 dimensions"});
  expect_user_error([&] { read_ts(write("nolabel.ts", h + "1,2,3,4\n")); }, {"nolabel.ts:10", "':'"});
  expect_user_error([&] { read_ts(write("ts.ts", "@timeStamps true\n@classLabel true a b\n@data\n")); },
                    {"ts.ts:1", "time-stamped"});
  expect_user_error([&] { read_ts(write("nocl.ts", "@problemName X\n@data\n1,2:a\n")); }, {"nocl.ts:2", "@classLabel"});
  expect_user_error([&] { read_ts(write("reg.ts", "@classLabel false\n@data\n")); }, {"reg.ts:1", "class labels"});
  expect_user_error([&] { read_ts(write("empty.ts", h)); }, {"no cases"});
  expect_user_error([&] { read_ts((dir_ / "absent.ts").string()); }, {"absent.ts", "no such file"});
  expect_user_error([&] { read_series_file(write("x.csv", "1,2\n")); }, {"x.csv", ".ts", ".tsv"});
}

TEST_F(LoaderUcr, TsvRoundTripAndBadInput) {
  const auto p = write("toy_TRAIN.tsv", "2\t1.0\t2.0\t3.0\n-1\t4\t5\t6\n10\t7\t8\t9\n2\t0\t0\t0\n");
  const SeriesSet s = read_tsv(p);
  ASSERT_EQ(s.x.sizes(), (at::IntArrayRef{4, 3, 1}));
  EXPECT_EQ(s.x[2][1][0].item<float>(), 8.0f);
  // Numeric labels sort as numbers: -1, 2, 10.
  const auto classes = sorted_classes(s.labels);
  EXPECT_EQ(classes, (std::vector<std::string>{"-1", "2", "10"}));
  EXPECT_EQ(label_ids(s, classes), (std::vector<std::int64_t>{1, 0, 2, 1}));
  EXPECT_EQ(sorted_classes({"b", "a", "b"}), (std::vector<std::string>{"a", "b"}));

  expect_user_error([&] { read_tsv(write("bad.tsv", "1\t1\t2\n1\t1\tx\n")); }, {"bad.tsv:2", "value 2", "not a number"});
  expect_user_error([&] { read_tsv(write("len.tsv", "1\t1\t2\n1\t1\n")); }, {"len.tsv:2", "1 values"});
  expect_user_error([&] { read_tsv(write("nan.tsv", "1\t1\tNaN\n")); }, {"nan.tsv:1", "equal length"});
  expect_user_error([&] { read_tsv(write("one.tsv", "1\n")); }, {"one.tsv:1", "tab-separated"});
}

TEST_F(LoaderUcr, TimeseriesFileTask) {
  std::string train = kHeader, test = kHeader;
  for (int i = 0; i < 20; ++i) {
    const std::string label = i % 2 ? "high" : "low";
    const double base = i % 2 ? 5.0 : -5.0;
    train += std::to_string(base + i) + ",1,2," + std::to_string(i) + ":" + label + "\n";
    if (i < 6) test += std::to_string(base) + ",0,0,0:" + label + "\n";
  }
  const auto tr = write("Toy_TRAIN.ts", train), te = write("Toy_TEST.ts", test);
  const auto info = testing::describe_task("timeseries-file", {{"path", tr}, {"eval_path", te}}, 0);
  EXPECT_EQ(info.modality, Modality::Signal);
  EXPECT_EQ(info.input_shape, (std::vector<std::int64_t>{4, 1}));
  EXPECT_EQ(info.num_classes, 2);
  const auto d = testing::generate_task("timeseries-file", {{"path", tr}, {"eval_path", te}}, 0, 3, 6);
  ASSERT_EQ(d.train.x.sizes(), (at::IntArrayRef{20, 4, 1}));
  // Each case keeps its label: the last value is its index i, odd i is "high".
  for (std::int64_t k = 0; k < 20; ++k)
    EXPECT_EQ(d.train.y[k].item<std::int64_t>(), static_cast<std::int64_t>(d.train.x[k][3][0].item<float>()) % 2);
  EXPECT_TRUE(at::equal(d.eval.y, at::tensor({0, 1, 0, 1, 0, 1}, at::kLong)));
  // Held out: fixed across run seeds; z-scoring per series.
  const json split = {{"path", tr}, {"eval_fraction", 0.25}, {"normalize", "zscore"}, {"train_size", 10}};
  const auto a = testing::generate_task("timeseries-file", split, 0, 1, 5);
  const auto b = testing::generate_task("timeseries-file", split, 0, 2, 5);
  EXPECT_TRUE(at::equal(a.eval.x, b.eval.x));
  EXPECT_FALSE(at::equal(a.train.x, b.train.x));
  EXPECT_EQ(a.train.size(), 10);
  EXPECT_NEAR(a.train.x[0].mean().item<double>(), 0.0, 1e-5);
  // A .tsv evaluation file against .ts classes; an undeclared label stops it.
  const auto tsv = write("Toy_TEST.tsv", "low\t1\t2\t3\t4\nmid\t1\t2\t3\t4\n");
  expect_user_error([&] { testing::describe_task("timeseries-file", {{"path", tr}, {"eval_path", tsv}}, 0); },
                    {"Toy_TEST.tsv:2", "'mid'"});
  const auto short_tsv = write("Short.tsv", "low\t1\t2\t3\n");
  expect_user_error([&] { testing::describe_task("timeseries-file", {{"path", tr}, {"eval_path", short_tsv}}, 0); },
                    {"Short.tsv", "3 long", "4 long"});
  expect_user_error([&] { testing::generate_task("timeseries-file", {{"path", tr}, {"eval_path", te}}, 0, 1, 7); },
                    {"eval_size 7", "6 evaluation cases"});
  expect_user_error([&] { testing::describe_task("timeseries-file", {{"path", tr}, {"train_size", 21}}, 0); },
                    {"train_size 21"});
}

}  // namespace lrb
