#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <zlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <limits>

#include "tests/support/task_test_util.h"
#include "workloads/loaders/idx.h"

namespace lrb {
namespace {

namespace fs = std::filesystem;

class LoaderIdx : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("lrb_idx_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // An idx file written byte by byte, independently of write_idx.
  static std::string idx_bytes(std::uint8_t type, std::vector<std::uint32_t> dims, const std::string& data) {
    std::string b = {0, 0, static_cast<char>(type), static_cast<char>(dims.size())};
    for (auto d : dims)
      for (int s = 24; s >= 0; s -= 8) b += static_cast<char>((d >> s) & 0xff);
    return b + data;
  }
  void write_raw(const std::string& name, const std::string& bytes) const {
    std::ofstream(path(name), std::ios::binary) << bytes;
  }
  void write_gz(const std::string& name, const std::string& bytes) const {
    gzFile f = gzopen(path(name).c_str(), "wb");
    gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
    gzclose(f);
  }
  // Expects a UserError whose message holds every needle.
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

}  // namespace

TEST_F(LoaderIdx, RoundTripRawAndGzip) {
  std::string pixels;
  for (int i = 0; i < 12; ++i) pixels += static_cast<char>(i * 20);
  const std::string bytes = idx_bytes(0x08, {3, 2, 2}, pixels);
  write_raw("a-idx3-ubyte", bytes);
  write_gz("a-idx3-ubyte.gz", bytes);
  for (const char* name : {"a-idx3-ubyte", "a-idx3-ubyte.gz"}) {
    const auto t = read_idx(path(name));
    ASSERT_EQ(t.sizes(), (at::IntArrayRef{3, 2, 2}));
    ASSERT_EQ(t.scalar_type(), at::kByte);
    for (int i = 0; i < 12; ++i) EXPECT_EQ(t.view(-1)[i].item<int>(), i * 20);
    EXPECT_EQ(read_idx_header(path(name)).dims, (std::vector<std::int64_t>{3, 2, 2}));
  }
  // Big-endian int32 and float.
  write_raw("i.idx", idx_bytes(0x0C, {2}, std::string("\x00\x00\x01\x02\xff\xff\xff\xfe", 8)));
  const auto ints = read_idx(path("i.idx"));
  EXPECT_EQ(ints[0].item<int>(), 258);
  EXPECT_EQ(ints[1].item<int>(), -2);
  write_raw("f.idx", idx_bytes(0x0D, {1}, std::string("\x3f\xc0\x00\x00", 4)));  // 1.5f
  EXPECT_EQ(read_idx(path("f.idx"))[0].item<float>(), 1.5f);
  // write_idx agrees with the reader for every element type.
  for (auto dtype : {at::kByte, at::kChar, at::kShort, at::kInt, at::kFloat, at::kDouble}) {
    const auto t = at::arange(-5, 7, at::TensorOptions().dtype(at::kDouble)).mul(3).to(dtype).reshape({3, 4});
    const auto want = dtype == at::kByte ? at::arange(-5, 7).mul(3).to(dtype).reshape({3, 4}) : t;
    write_idx(path("w.gz"), want, true);
    EXPECT_TRUE(at::equal(read_idx(path("w.gz")), want)) << dtype;
    write_idx(path("w.idx"), want, false);
    EXPECT_TRUE(at::equal(read_idx(path("w.idx")), want)) << dtype;
  }
}

TEST_F(LoaderIdx, BadInput) {
  expect_user_error([&] { read_idx(path("missing.gz")); }, {"missing.gz", "no such file"});
  // The header promises 3x2x2 bytes; the data has 10.
  const std::string short_data = idx_bytes(0x08, {3, 2, 2}, std::string(10, 'x'));
  write_raw("short", short_data);
  write_gz("short.gz", short_data);
  for (const char* name : {"short", "short.gz"})
    expect_user_error([&] { read_idx(path(name)); }, {name, "truncated", "[3, 2, 2]", "10 bytes"});
  // A gzip stream cut in half (incompressible data, so the cut falls in the pixels).
  std::string noise(4096, 0);
  std::uint32_t state = 1;
  for (auto& c : noise) c = static_cast<char>((state = state * 1664525u + 1013904223u) >> 24);
  write_gz("full.gz", idx_bytes(0x08, {64, 64}, noise));
  std::string gz;
  {
    std::ifstream in(path("full.gz"), std::ios::binary);
    gz.assign(std::istreambuf_iterator<char>(in), {});
  }
  write_raw("cut.gz", gz.substr(0, gz.size() / 2));
  expect_user_error([&] { read_idx(path("cut.gz")); }, {"cut.gz", "truncated"});
  write_raw("header.idx", std::string("\x00\x00\x08\x03\x00\x00", 6));
  expect_user_error([&] { read_idx(path("header.idx")); }, {"header.idx", "truncated in its header"});
  write_raw("magic.idx", "PK\x03\x04 this is a zip");
  expect_user_error([&] { read_idx(path("magic.idx")); }, {"magic.idx", "not an idx file"});
  write_raw("long.idx", idx_bytes(0x08, {2}, "abc"));
  expect_user_error([&] { read_idx(path("long.idx")); }, {"long.idx", "bytes after"});
}

// A damaged header may claim any sizes: their product is checked before it can overflow
// (found by tests/fuzz/idx_fuzz.cpp), and a claim the file does not back costs no memory:
// 2^39 f64 elements (4 TiB) in a 40-byte file is "truncated", not an allocation.
TEST_F(LoaderIdx, AHeaderClaimingAHugeArrayIsRefusedWithoutAllocatingIt) {
  write_raw("overflow.idx", idx_bytes(0x08, {0x02022628u, 0x5a14321au, 0x00000003u}, std::string(16, 'x')));
  expect_user_error([&] { read_idx(path("overflow.idx")); }, {"overflow.idx", "more than 2^40 elements"});
  expect_user_error([&] { read_idx_header(path("overflow.idx")); }, {"overflow.idx", "more than 2^40 elements"});
  for (const char* name : {"huge.idx", "huge.idx.gz"}) {
    const std::string bytes = idx_bytes(0x0E, {1u << 20, 1u << 19}, std::string(24, 'x'));
    if (std::string(name).size() > 8)
      write_gz(name, bytes);
    else
      write_raw(name, bytes);
    expect_user_error([&] { read_idx(path(name)); }, {name, "truncated", "[1048576, 524288]"});
  }
}

TEST_F(LoaderIdx, IdxFileTask) {
  // 10 images 4x4 with labels 0..2, and a separate eval pair.
  auto images = at::arange(160).remainder(256).to(at::kByte).reshape({10, 4, 4});
  auto labels = at::tensor({0, 1, 2, 0, 1, 2, 0, 1, 2, 0}, at::kByte);
  write_idx(path("train-images.gz"), images, true);
  write_idx(path("train-labels.gz"), labels, true);
  write_idx(path("eval-images"), images.narrow(0, 0, 4), false);
  write_idx(path("eval-labels"), labels.narrow(0, 0, 4), false);
  const json o = {{"images", path("train-images.gz")}, {"labels", path("train-labels.gz")},
                  {"eval_images", path("eval-images")}, {"eval_labels", path("eval-labels")}};
  const auto info = testing::describe_task("idx-file", o, 0);
  EXPECT_EQ(info.num_classes, 3);
  EXPECT_EQ(info.input_shape, (std::vector<std::int64_t>{1, 4, 4}));
  const auto d = testing::generate_task("idx-file", o, 0, 5, 4);
  ASSERT_EQ(d.train.x.sizes(), (at::IntArrayRef{10, 1, 4, 4}));
  // Every training image is there once, with its label, in the seed's order.
  const auto sums = d.train.x.reshape({10, -1}).mul(255).round().sum(1);
  for (std::int64_t i = 0; i < 10; ++i) {
    const auto k = static_cast<std::int64_t>(d.train.x[i][0][0][0].item<float>() * 255 + 0.5) / 16;
    EXPECT_EQ(d.train.y[i].item<std::int64_t>(), labels[k].item<std::int64_t>());
  }
  EXPECT_TRUE(at::equal(d.eval.y, labels.narrow(0, 0, 4).to(at::kLong)));
  EXPECT_EQ(std::get<0>(at::_unique(sums)).size(0), 10);
  // Held-out split when no eval files: fixed by split_seed, not by the run seed.
  const json split = {{"images", path("train-images.gz")}, {"labels", path("train-labels.gz")}, {"eval_fraction", 0.3}};
  const auto s1 = testing::generate_task("idx-file", split, 0, 1, 3);
  const auto s2 = testing::generate_task("idx-file", split, 0, 2, 3);
  EXPECT_EQ(s1.train.size(), 7);
  EXPECT_TRUE(at::equal(s1.eval.x, s2.eval.x));
  const auto seq = testing::generate_task("idx-file", {{"images", path("train-images.gz")}, {"labels", path("train-labels.gz")},
                                                       {"view", "sequence"}, {"eval_fraction", 0.3}}, 0, 1, 3);
  EXPECT_EQ(seq.train.x.sizes(), (at::IntArrayRef{7, 16}));
}

TEST_F(LoaderIdx, IdxFileTaskBadInput) {
  auto images = at::zeros({5, 4, 4}, at::kByte);
  write_idx(path("img"), images, false);
  write_idx(path("lab"), at::tensor({0, 1, 7, 0, 1}, at::kByte), false);
  write_idx(path("lab4"), at::tensor({0, 1, 1, 0}, at::kByte), false);
  write_idx(path("lab2d"), at::zeros({5, 2}, at::kByte), false);
  write_idx(path("flat"), at::zeros({5, 16}, at::kByte), false);
  write_idx(path("img5"), at::zeros({5, 5, 5}, at::kByte), false);
  write_idx(path("float"), at::zeros({5, 4, 4}, at::kFloat), false);
  auto opts = [&](const std::string& img, const std::string& lab) { return json{{"images", path(img)}, {"labels", path(lab)}}; };
  // Label out of range (num_classes given): names file and record.
  json o = opts("img", "lab");
  o["num_classes"] = 3;
  expect_user_error([&] { testing::describe_task("idx-file", o, 0); }, {path("lab"), "record 2", "label 7", "0..2"});
  expect_user_error([&] { testing::describe_task("idx-file", opts("img", "lab4"), 0); }, {"4 labels", "5 images"});
  expect_user_error([&] { testing::describe_task("idx-file", opts("img", "lab2d"), 0); }, {"one-dimensional"});
  expect_user_error([&] { testing::describe_task("idx-file", opts("flat", "lab"), 0); }, {"[n, H, W]"});
  expect_user_error([&] { testing::describe_task("idx-file", opts("img", "nope"), 0); }, {"nope", "no such file"});
  json seq = opts("float", "lab");
  seq["view"] = "sequence";
  expect_user_error([&] { testing::describe_task("idx-file", seq, 0); }, {"unsigned-byte"});
  json ev = opts("img", "lab");
  ev["eval_images"] = path("img5");
  ev["eval_labels"] = path("lab");
  expect_user_error([&] { testing::describe_task("idx-file", ev, 0); }, {"1x5x5", "1x4x4"});
  json big = opts("img", "lab");
  big["train_size"] = 50;
  expect_user_error([&] { testing::describe_task("idx-file", big, 0); }, {"train_size 50"});
  EXPECT_THROW(testing::task_options("idx-file", {{"images", ""}, {"labels", "x"}}, 0), OptionError);
}

// A truncated image file, one with trailing bytes, or a non-finite pixel stops `validate`
// (the task's describe), not a run in the middle of a sweep: the whole file is read, not
// only its header.
TEST_F(LoaderIdx, DescribeReadsTheWholeImageFile) {
  write_idx(path("lab"), at::tensor({0, 1, 2, 0, 1}, at::kByte), false);
  const std::string pixels(5 * 4 * 4, '\x07');
  write_raw("short", idx_bytes(0x08, {5, 4, 4}, pixels.substr(0, 70)));
  write_raw("long", idx_bytes(0x08, {5, 4, 4}, pixels + "xx"));
  write_gz("short.gz", idx_bytes(0x08, {5, 4, 4}, pixels.substr(0, 70)));
  auto opts = [&](const std::string& img) { return json{{"images", path(img)}, {"labels", path("lab")}}; };
  expect_user_error([&] { testing::describe_task("idx-file", opts("short"), 0); }, {path("short"), "truncated", "80 bytes"});
  expect_user_error([&] { testing::describe_task("idx-file", opts("long"), 0); }, {path("long"), "bytes after"});
  expect_user_error([&] { testing::describe_task("idx-file", opts("short.gz"), 0); }, {path("short.gz"), "truncated"});
  // The separate evaluation images too.
  write_raw("good", idx_bytes(0x08, {5, 4, 4}, pixels));
  json ev = opts("good");
  ev["eval_images"] = path("short");
  ev["eval_labels"] = path("lab");
  expect_user_error([&] { testing::describe_task("idx-file", ev, 0); }, {path("short"), "truncated"});
  // Float pixels must be finite: the first bad one is named with its record.
  at::Tensor f = at::zeros({5, 4, 4}, at::kFloat);
  f[3][2][1] = std::numeric_limits<float>::quiet_NaN();
  write_idx(path("nan"), f, false);
  expect_user_error([&] { testing::describe_task("idx-file", opts("nan"), 0); }, {path("nan"), "element 57", "record 3", "not finite"});
  EXPECT_NO_THROW(testing::describe_task("idx-file", opts("good"), 0));
}

}  // namespace lrb
