// The generic HDF5 loader and the hdf5-file task: files written here with the store's h5
// helpers (every element type and shape a user may bring), read back exactly; each kind of
// bad input is a UserError naming the file, the dataset and the record.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>

#include "suite/hdf5/h5.h"
#include "tests/support/task_test_util.h"
#include "workloads/loaders/hdf5_data.h"

namespace lrb {
namespace {

namespace fs = std::filesystem;

// Writes `t` as dataset `name` of the given HDF5 types (defaults: the tensor's own).
void put(const h5::Object& loc, const std::string& name, const at::Tensor& t, hid_t file_type, hid_t mem_type) {
  const at::Tensor c = t.contiguous();
  std::vector<hsize_t> dims(c.sizes().begin(), c.sizes().end());
  h5::write_array_dataset(loc, name, file_type, mem_type, dims, c.data_ptr());
}
void put_i64(const h5::Object& loc, const std::string& name, const at::Tensor& t) {
  put(loc, name, t.to(at::kLong), H5T_STD_I64LE, H5T_NATIVE_INT64);
}
void put_f32(const h5::Object& loc, const std::string& name, const at::Tensor& t) {
  put(loc, name, t.to(at::kFloat), H5T_IEEE_F32LE, H5T_NATIVE_FLOAT);
}

class LoaderHdf5 : public ::testing::Test {
 protected:
  void SetUp() override {
    h5::silence_error_printing();
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / (std::string("lrb_hdf5_") + info->name() + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    EXPECT_EQ(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL), 0);  // no handle leaked
    fs::remove_all(dir_);
  }
  // A new file; `fill` writes its datasets and attributes into the root group.
  std::string file(const std::string& name, const std::function<void(const h5::Group&)>& fill) const {
    const std::string p = (dir_ / name).string();
    h5::File f = h5::create_file(p);
    {
      h5::Group root = h5::open_group(f, "/");
      fill(root);
    }
    f.close();
    return p;
  }
  // Tokens [n, 5] in 0..9, labels 0..2 cycling: a small valid file.
  std::string tokens_file(std::int64_t n = 12, const std::function<void(const h5::Group&)>& extra = {}) const {
    return file("tokens.h5", [&](const h5::Group& g) {
      put_i64(g, "x", at::arange(n * 5).reshape({n, 5}) % 10);
      put_i64(g, "y", at::arange(n) % 3);
      if (extra) extra(g);
    });
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
  static json task_options(const std::string& path, json extra = json::object()) {
    extra["path"] = path;
    return extra;
  }

  fs::path dir_;
};

}  // namespace

TEST_F(LoaderHdf5, TokensRoundTripWithAttributes) {
  const at::Tensor x = at::arange(24, at::kInt).reshape({4, 6}) % 17;
  const at::Tensor y = at::tensor({0, 4, 2, 1}, at::kShort);
  const std::string p = file("t.h5", [&](const h5::Group& g) {
    put(g, "x", x, H5T_STD_I32BE, H5T_NATIVE_INT32);  // big-endian on disk: HDF5 converts
    put(g, "y", y, H5T_STD_I16LE, H5T_NATIVE_INT16);
    h5::write_int_attribute(g, "vocab_size", 20);
    h5::write_int_attribute(g, "num_classes", 6);
    h5::write_int_attribute(g, "pad_token", 0);
    h5::write_string_attribute(g, "comment", "ignored");
  });
  const Hdf5Data d = read_hdf5_data(p);
  EXPECT_EQ(d.modality, Modality::Tokens);
  ASSERT_EQ(d.x.scalar_type(), at::kLong);
  EXPECT_TRUE(at::equal(d.x, x.to(at::kLong)));
  ASSERT_EQ(d.y.scalar_type(), at::kLong);
  EXPECT_TRUE(at::equal(d.y, y.to(at::kLong)));
  EXPECT_FALSE(d.multilabel);
  EXPECT_EQ(d.vocab_size, 20);
  EXPECT_EQ(d.num_classes, 6);
  EXPECT_EQ(d.pad_token, 0);
  EXPECT_TRUE(d.split.empty());
}

TEST_F(LoaderHdf5, DefaultsComeFromTheValues) {
  const Hdf5Data d = read_hdf5_data(tokens_file());
  EXPECT_EQ(d.vocab_size, 10);
  EXPECT_EQ(d.num_classes, 3);
  EXPECT_EQ(d.pad_token, -1);
}

TEST_F(LoaderHdf5, SignalGridMultilabelAndSplitRoundTrip) {
  const at::Tensor sig = at::linspace(-1, 1, 4 * 7 * 2, at::kDouble).reshape({4, 7, 2});
  const at::Tensor ml = at::tensor({1, 0, 1, 0, 0, 1, 1, 1, 0, 0, 0, 0}, at::kByte).reshape({4, 3});
  const std::string ps = file("s.h5", [&](const h5::Group& g) {
    put(g, "x", sig, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE);
    put(g, "y", ml, H5T_STD_U8LE, H5T_NATIVE_UINT8);
    put_i64(g, "split", at::tensor({0, 1, 0, 2}, at::kLong));
  });
  const Hdf5Data s = read_hdf5_data(ps);
  EXPECT_EQ(s.modality, Modality::Signal);
  ASSERT_EQ(s.x.scalar_type(), at::kFloat);
  EXPECT_TRUE(at::equal(s.x, sig.to(at::kFloat)));
  EXPECT_TRUE(s.multilabel);
  ASSERT_EQ(s.y.scalar_type(), at::kFloat);
  EXPECT_TRUE(at::equal(s.y, ml.to(at::kFloat)));
  EXPECT_EQ(s.num_classes, 3);
  EXPECT_EQ(s.split, (std::vector<std::int8_t>{0, 1, 0, 2}));

  const at::Tensor grid = at::rand({5, 2, 3, 4});
  const std::string pg = file("g.h5", [&](const h5::Group& g) {
    put_f32(g, "x", grid);
    put_i64(g, "y", at::tensor({0, 1, 1, 0, 1}, at::kLong));
  });
  const Hdf5Data gd = read_hdf5_data(pg);
  EXPECT_EQ(gd.modality, Modality::Grid);
  EXPECT_TRUE(at::equal(gd.x, grid));
  EXPECT_EQ(gd.num_classes, 2);
}

TEST_F(LoaderHdf5, TaskUsesTheSplitInFileOrder) {
  const std::int64_t n = 10;
  const std::string p = file("split.h5", [&](const h5::Group& g) {
    put_f32(g, "x", at::arange(n * 4 * 1).reshape({n, 4, 1}));
    put_i64(g, "y", at::arange(n) % 2);
    put_i64(g, "split", at::tensor({0, 1, 0, 0, 1, 2, 0, 1, 0, 0}, at::kLong));
  });
  const TaskInfo info = testing::describe_task("hdf5-file", task_options(p), 0);
  EXPECT_EQ(info.modality, Modality::Signal);
  EXPECT_EQ(info.input_shape, (std::vector<std::int64_t>{4, 1}));
  EXPECT_EQ(info.num_classes, 2);
  EXPECT_EQ(info.metrics, (std::vector<std::string>{"accuracy", "macro_f1"}));

  const TaskData a = testing::generate_task("hdf5-file", task_options(p), 0, 7, 2);
  // Evaluation: the first eval_size records marked 1, in file order (records 1 and 4).
  EXPECT_TRUE(at::equal(a.eval.x.select(1, 0).squeeze(1), at::tensor({4.0f, 16.0f})));
  // Training: every record marked 0, shuffled by the run seed; record 5 (2) is in neither.
  ASSERT_EQ(a.train.size(), 6);
  const auto firsts = std::get<0>(a.train.x.select(1, 0).squeeze(1).sort());
  EXPECT_TRUE(at::equal(firsts, at::tensor({0.0f, 8.0f, 12.0f, 24.0f, 32.0f, 36.0f})));
  const TaskData b = testing::generate_task("hdf5-file", task_options(p), 0, 7, 2);
  EXPECT_TRUE(at::equal(a.train.x, b.train.x));
  const TaskData c = testing::generate_task("hdf5-file", task_options(p, {{"train_size", 3}}), 0, 8, 3);
  EXPECT_EQ(c.train.size(), 3);
  EXPECT_EQ(c.eval.size(), 3);
  expect_user_error([&] { testing::generate_task("hdf5-file", task_options(p), 0, 7, 4); },
                    {p, "eval_size 4", "3 evaluation records", "/split"});
}

TEST_F(LoaderHdf5, TaskHoldsOutWithoutASplit) {
  const std::string p = tokens_file(20);
  const TaskInfo info = testing::describe_task("hdf5-file", task_options(p, {{"metrics", "accuracy"}}), 0);
  EXPECT_EQ(info.vocab_size, 10);
  EXPECT_EQ(info.metrics, std::vector<std::string>{"accuracy"});
  const json o = task_options(p, {{"eval_fraction", 0.25}});
  const TaskData a = testing::generate_task("hdf5-file", o, 0, 1, 5);
  const TaskData b = testing::generate_task("hdf5-file", o, 0, 2, 5);
  EXPECT_EQ(a.train.size(), 15);
  EXPECT_TRUE(at::equal(a.eval.x, b.eval.x)) << "the held-out part depends on split_seed only";
  EXPECT_FALSE(at::equal(a.train.x, b.train.x)) << "the run seed orders the training records";
  const TaskData c = testing::generate_task("hdf5-file", task_options(p, {{"eval_fraction", 0.25}, {"split_seed", 5}}), 0, 1, 5);
  EXPECT_FALSE(at::equal(a.eval.x, c.eval.x));
  expect_user_error([&] { testing::describe_task("hdf5-file", task_options(p, {{"train_size", 19}}), 0); },
                    {"train_size 19", "18 training records", p});
}

TEST_F(LoaderHdf5, MultilabelMetricsAndChecks) {
  const std::string p = file("ml.h5", [&](const h5::Group& g) {
    put_i64(g, "x", at::arange(30).reshape({6, 5}) % 7);
    put_f32(g, "y", at::tensor({1, 0, 0, 1, 1, 1, 0, 0, 0, 1, 0, 1}, at::kFloat).reshape({6, 2}));
  });
  const TaskInfo info = testing::describe_task("hdf5-file", task_options(p), 0);
  EXPECT_TRUE(info.multilabel);
  EXPECT_EQ(info.num_classes, 2);
  EXPECT_EQ(info.metrics, (std::vector<std::string>{"ebf", "micro_f1"}));
  EXPECT_THROW(testing::describe_task("hdf5-file", task_options(p, {{"metrics", "accuracy"}}), 0), OptionError);
}

// ---- bad input: each a UserError naming the file, the dataset and the record --------

TEST_F(LoaderHdf5, MissingOrForeignFile) {
  const std::string missing = (dir_ / "absent.h5").string();
  expect_user_error([&] { read_hdf5_data(missing); }, {missing, "no such file"});
  const std::string text = (dir_ / "text.h5").string();
  std::ofstream(text) << "x,y\n1,2\n";
  expect_user_error([&] { read_hdf5_data(text); }, {text, "cannot open it as an HDF5 file"});
  // Through the task: the sweep's expansion (describe) stops on it.
  expect_user_error([&] { testing::describe_task("hdf5-file", task_options(missing), 0); }, {missing});
}

TEST_F(LoaderHdf5, MissingDatasets) {
  const std::string no_x = file("nox.h5", [](const h5::Group& g) { put_i64(g, "y", at::zeros({3})); });
  expect_user_error([&] { read_hdf5_data(no_x); }, {no_x, "no dataset /x"});
  const std::string no_y = file("noy.h5", [](const h5::Group& g) { put_i64(g, "x", at::zeros({3, 2})); });
  expect_user_error([&] { read_hdf5_data(no_y); }, {no_y, "no dataset /y"});
  const std::string group_x = file("gx.h5", [](const h5::Group& g) { h5::create_group(g, "x"); });
  expect_user_error([&] { read_hdf5_data(group_x); }, {group_x, "/x is not a dataset"});
}

TEST_F(LoaderHdf5, WrongRanksNameTheExpectedShape) {
  const std::string int3 = file("i3.h5", [](const h5::Group& g) {
    put_i64(g, "x", at::zeros({3, 2, 2}));
    put_i64(g, "y", at::zeros({3}));
  });
  expect_user_error([&] { read_hdf5_data(int3); }, {int3, "/x holds integers of shape [3, 2, 2]", "N x L"});
  const std::string float2 = file("f2.h5", [](const h5::Group& g) {
    put_f32(g, "x", at::zeros({3, 8}));
    put_i64(g, "y", at::zeros({3}));
  });
  expect_user_error([&] { read_hdf5_data(float2); }, {float2, "/x holds floats of shape [3, 8]", "N x L x C", "N x C x H x W"});
  const std::string y3 = file("y3.h5", [](const h5::Group& g) {
    put_i64(g, "x", at::zeros({3, 8}));
    put_i64(g, "y", at::zeros({3, 2, 1}));
  });
  expect_user_error([&] { read_hdf5_data(y3); }, {y3, "/y has shape [3, 2, 1]", "expected [3]", "[3, K]"});
  const std::string yf = file("yf.h5", [](const h5::Group& g) {
    put_i64(g, "x", at::zeros({3, 8}));
    put_f32(g, "y", at::zeros({3}));
  });
  expect_user_error([&] { read_hdf5_data(yf); }, {yf, "/y holds floats", "integers"});
  const std::string empty = file("empty.h5", [](const h5::Group& g) {
    put_i64(g, "x", at::zeros({0, 8}));
    put_i64(g, "y", at::zeros({0}));
  });
  expect_user_error([&] { read_hdf5_data(empty); }, {empty, "/x of shape [0, 8] is empty"});
}

TEST_F(LoaderHdf5, MismatchedRecordCounts) {
  const std::string p = file("n.h5", [](const h5::Group& g) {
    put_i64(g, "x", at::zeros({5, 4}));
    put_i64(g, "y", at::zeros({4}));
  });
  expect_user_error([&] { read_hdf5_data(p); }, {p, "/y has 4 records but /x has 5"});
  const std::string s = tokens_file(6, [](const h5::Group& g) { put_i64(g, "split", at::zeros({5})); });
  expect_user_error([&] { read_hdf5_data(s); }, {s, "/split has shape [5]", "expected 6 integers"});
}

TEST_F(LoaderHdf5, LabelsOutOfRangeNameTheRecord) {
  const std::string attr = file("k.h5", [](const h5::Group& g) {
    put_i64(g, "x", at::zeros({5, 4}));
    put_i64(g, "y", at::tensor({0, 1, 2, 7, 1}, at::kLong));
    h5::write_int_attribute(g, "num_classes", 3);
  });
  expect_user_error([&] { read_hdf5_data(attr); }, {attr, "/y[3] = 7", "num_classes = 3"});
  const std::string neg = file("neg.h5", [](const h5::Group& g) {
    put_i64(g, "x", at::zeros({5, 4}));
    put_i64(g, "y", at::tensor({0, 1, -1, 0, 1}, at::kLong));
  });
  expect_user_error([&] { read_hdf5_data(neg); }, {neg, "/y[2] = -1 is negative"});
  const std::string one = file("one.h5", [](const h5::Group& g) {
    put_i64(g, "x", at::zeros({3, 4}));
    put_i64(g, "y", at::zeros({3}));
  });
  expect_user_error([&] { read_hdf5_data(one); }, {one, "every label in /y is 0"});
  const std::string ml = file("ml.h5", [](const h5::Group& g) {
    put_i64(g, "x", at::zeros({3, 4}));
    put_f32(g, "y", at::tensor({0.f, 1.f, 1.f, 0.f, 1.f, 0.5f}).reshape({3, 2}));
  });
  expect_user_error([&] { read_hdf5_data(ml); }, {ml, "/y[2, 1] = 0.5", "0 or 1"});
  const std::string mlk = file("mlk.h5", [](const h5::Group& g) {
    put_i64(g, "x", at::zeros({3, 4}));
    put_i64(g, "y", at::ones({3, 2}));
    h5::write_int_attribute(g, "num_classes", 3);
  });
  expect_user_error([&] { read_hdf5_data(mlk); }, {mlk, "num_classes = 3", "2 columns"});
}

TEST_F(LoaderHdf5, TokensSplitAndAttributesAreChecked) {
  const std::string vocab = tokens_file(12, [](const h5::Group& g) { h5::write_int_attribute(g, "vocab_size", 9); });
  // Ids run 0..9 row-major over [12, 5]: the first 9 is /x[1, 4].
  expect_user_error([&] { read_hdf5_data(vocab); }, {vocab, "/x[1, 4] = 9", "vocab_size = 9"});
  const std::string neg = file("negx.h5", [](const h5::Group& g) {
    put_i64(g, "x", at::tensor({0, 1, 2, 3, -4, 5}, at::kLong).reshape({2, 3}));
    put_i64(g, "y", at::tensor({0, 1}, at::kLong));
  });
  expect_user_error([&] { read_hdf5_data(neg); }, {neg, "/x[1, 1] = -4 is negative"});
  const std::string pad = tokens_file(12, [](const h5::Group& g) { h5::write_int_attribute(g, "pad_token", 10); });
  expect_user_error([&] { read_hdf5_data(pad); }, {pad, "pad_token = 10"});
  const std::string split = tokens_file(6, [](const h5::Group& g) {
    put_i64(g, "split", at::tensor({0, 1, 0, 0, 5, 1}, at::kLong));
  });
  expect_user_error([&] { read_hdf5_data(split); }, {split, "/split[4] = 5"});
  const std::string no_train = tokens_file(3, [](const h5::Group& g) { put_i64(g, "split", at::ones({3})); });
  expect_user_error([&] { read_hdf5_data(no_train); }, {no_train, "no record as training"});
  const std::string float_attr = tokens_file(3, [](const h5::Group& g) {
    h5::write_string_attribute(g, "num_classes", "ten");
  });
  expect_user_error([&] { read_hdf5_data(float_attr); }, {float_attr, "num_classes must be a single integer"});
  const std::string pad_signal = file("ps.h5", [](const h5::Group& g) {
    put_f32(g, "x", at::zeros({3, 4, 1}));
    put_i64(g, "y", at::tensor({0, 1, 0}, at::kLong));
    h5::write_int_attribute(g, "pad_token", 0);
  });
  expect_user_error([&] { read_hdf5_data(pad_signal); }, {pad_signal, "pad_token is for token inputs"});
}

// Token ids and labels beyond any vocabulary or class count a model can be built for are
// the file's problem (a UserError naming file, dataset and index), not an abort later in
// the input stem: 2^63 - 1 used to make the vocabulary size overflow to -2^63.
TEST_F(LoaderHdf5, IdsBeyondAnyVocabularyAreUserErrors) {
  at::Tensor x = at::arange(12, at::kLong).reshape({3, 4}) % 5;
  x[1][2] = std::numeric_limits<std::int64_t>::max();
  const std::string top = file("top.h5", [&](const h5::Group& g) {
    put_i64(g, "x", x);
    put_i64(g, "y", at::tensor({0, 1, 0}, at::kLong));
  });
  expect_user_error([&] { read_hdf5_data(top); }, {top, "/x[1, 2] = 9223372036854775807", "out of any vocabulary"});
  // Unsigned 64-bit ids above int64's range are named with their own value, not a clamped one.
  const std::string u64 = file("u64.h5", [&](const h5::Group& g) {
    at::Tensor bits = at::arange(12, at::kLong).reshape({3, 4}) % 5;
    bits[2][3] = std::numeric_limits<std::int64_t>::min();  // the bits of 2^63 as uint64
    put(g, "x", bits, H5T_STD_U64LE, H5T_NATIVE_UINT64);
    put_i64(g, "y", at::tensor({0, 1, 0}, at::kLong));
  });
  expect_user_error([&] { read_hdf5_data(u64); }, {u64, "/x[2, 3] = 9223372036854775808"});
  const std::string big_vocab = tokens_file(12, [](const h5::Group& g) {
    h5::write_int_attribute(g, "vocab_size", std::numeric_limits<std::int64_t>::max());
  });
  expect_user_error([&] { read_hdf5_data(big_vocab); }, {big_vocab, "vocab_size = 9223372036854775807", "at most"});
  const std::string big_label = file("label.h5", [&](const h5::Group& g) {
    put_i64(g, "x", at::arange(12, at::kLong).reshape({3, 4}) % 5);
    put_i64(g, "y", at::tensor(std::vector<std::int64_t>{0, std::numeric_limits<std::int64_t>::max(), 1}, at::kLong));
  });
  expect_user_error([&] { read_hdf5_data(big_label); }, {big_label, "/y[1] = 9223372036854775807"});
  // Through the task, as `validate` and `run` see it: a UserError (exit 2), never an abort.
  const TaskEntry& task = *TaskRegistry::instance().find("hdf5-file");
  json o = task.schema.defaults(json::object());
  o["path"] = top;
  expect_user_error([&] { task.describe(o, 0); }, {top, "/x[1, 2]"});
}

TEST_F(LoaderHdf5, NonFiniteValuesNameTheRecord) {
  at::Tensor x = at::zeros({4, 3, 2});
  x[2][1][0] = std::nanf("");
  const std::string p = file("nan.h5", [&](const h5::Group& g) {
    put_f32(g, "x", x);
    put_i64(g, "y", at::tensor({0, 1, 0, 1}, at::kLong));
  });
  expect_user_error([&] { read_hdf5_data(p); }, {p, "/x[2]", "non-finite"});
  at::Tensor big = at::zeros({3, 1, 2, 2}, at::kDouble);
  big[1][0][1][1] = 1e300;  // finite in the file, infinite as float32
  const std::string q = file("big.h5", [&](const h5::Group& g) {
    put(g, "x", big, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE);
    put_i64(g, "y", at::tensor({0, 1, 0}, at::kLong));
  });
  expect_user_error([&] { read_hdf5_data(q); }, {q, "/x[1]", "non-finite"});
}

TEST_F(LoaderHdf5, DamagedChunkIsNamed) {
  const std::string p = tokens_file(12);
  // Find the chunk of /y (Fletcher32, written by write_array_dataset) and flip a byte in it.
  haddr_t addr = HADDR_UNDEF;
  {
    h5::File f = h5::open_file(p);
    h5::Dataset d = h5::open_dataset(f, "y");
    h5::Dataspace s(H5Dget_space(d.id()), p);
    hsize_t coords[1] = {0}, size = 0;
    unsigned mask = 0;
    ASSERT_GE(H5Dget_chunk_info(d.id(), s.id(), 0, coords, &mask, &addr, &size), 0);
  }
  {
    std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(addr + 8));
    char c = 0;
    f.read(&c, 1);
    c = static_cast<char>(c ^ 0x10);
    f.seekp(static_cast<std::streamoff>(addr + 8));
    f.write(&c, 1);
  }
  expect_user_error([&] { read_hdf5_data(p); }, {p, "/y is damaged (checksum error)"});
}

// A dataset may claim any shape and hold nothing (chunked, no chunk written): the reader
// refuses a claim beyond the machine's memory before it allocates (found by
// tests/fuzz/hdf5_data_fuzz.cpp: a 2 KiB file asked for exabytes).
TEST_F(LoaderHdf5, AShapeBeyondMemoryIsRefusedBeforeAllocating) {
  const std::string p = file("huge.h5", [&](const h5::Group& g) {
    put_i64(g, "y", at::arange(4) % 2);
    const hsize_t dims[2] = {hsize_t{1} << 40, hsize_t{1} << 20}, chunk[2] = {1, 1024};
    h5::Dataspace space(H5Screate_simple(2, dims, nullptr), "huge.h5");
    h5::Plist dcpl(H5Pcreate(H5P_DATASET_CREATE), "huge.h5");
    ASSERT_GE(H5Pset_chunk(dcpl.id(), 2, chunk), 0);
    h5::Dataset x(H5Dcreate2(g.id(), "x", H5T_STD_I64LE, space.id(), H5P_DEFAULT, dcpl.id(), H5P_DEFAULT), "huge.h5");
    ASSERT_TRUE(x);
  });
  expect_user_error([&] { read_hdf5_data(p); }, {p, "/x has shape 1099511627776x1048576", "more than this machine's memory"});
}

}  // namespace lrb
