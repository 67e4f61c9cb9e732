// lrbench attend: the user's own q, k, v through a kernel, and clear errors for bad files.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "suite/core/exit_codes.h"
#include "suite/nn/attention/sliding_window.h"
#include "suite/nn/attention/softmax.h"
#include "suite/hdf5/h5.h"
#include "tests/support/h5_tensors.h"
#include "tests/support/subprocess.h"

namespace lrb {
namespace {

void write_float(const h5::File& f, const std::string& name, const at::Tensor& t) {
  test::write_tensor(f, name, t, at::kFloat);
}

at::Tensor read_out(const std::filesystem::path& path) { return test::read_tensor(path, "out", at::kFloat); }

TEST(SlowAttendCommand, RunsAKernelOnTheUsersTensors) {
  test::TempDir t;
  at::manual_seed(3);
  const at::Tensor q = at::randn({2, 3, 37, 8}), k = at::randn({2, 3, 37, 8}), v = at::randn({2, 3, 37, 8});
  at::Tensor mask = at::ones({2, 37}, at::kByte);
  mask[1].slice(0, 30) = 0;
  {
    h5::File f = h5::create_file(t / "in.h5");
    write_float(f, "q", q);
    write_float(f, "k", k);
    write_float(f, "v", v);
    std::vector<hsize_t> md = {2, 37};
    h5::write_array_dataset(f, "mask", H5T_STD_U8LE, H5T_NATIVE_UINT8, md, mask.data_ptr());
    f.close();
  }
  auto r = test::run({test::lrbench(), "attend", "--kernel", "sliding_window", "--opt", "window=4", "--in",
                      (t / "in.h5").string(), "--out", (t / "out.h5").string()});
  ASSERT_EQ(r.code, kExitDone) << r.output;
  SlidingWindowOptions o;
  o.window = 4;
  const at::Tensor expected = sliding_window_attention(q, k, v, o, mask.to(at::kBool));
  EXPECT_TRUE(at::allclose(read_out(t / "out.h5"), expected, 1e-5, 1e-6));

  auto listed = test::run({test::lrbench(), "attend", "--list"});
  ASSERT_EQ(listed.code, kExitDone);
  for (const char* k : {"softmax", "linear", "sliding_window", "block_sparse", "pooling", "proportional", "retention"})
    EXPECT_NE(listed.output.find(k), std::string::npos) << k;
}

TEST(SlowAttendCommand, MissingOrMisshapenDatasetsAreNamed) {
  test::TempDir t;
  {
    h5::File f = h5::create_file(t / "in.h5");
    write_float(f, "q", at::randn({1, 2, 16, 4}));
    write_float(f, "k", at::randn({1, 2, 16, 5}));
    f.close();
  }
  auto r = test::run({test::lrbench(), "attend", "--kernel", "softmax", "--in", (t / "in.h5").string(), "--out",
                      (t / "out.h5").string()});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.output.find("dataset 'k' has shape [1, 2, 16, 5]; expected [1, 2, Nk, 4]"), std::string::npos) << r.output;
  {
    h5::File f = h5::create_file(t / "in2.h5");
    write_float(f, "q", at::randn({1, 2, 16, 4}));
    write_float(f, "k", at::randn({1, 2, 16, 4}));
    f.close();
  }
  r = test::run({test::lrbench(), "attend", "--kernel", "softmax", "--in", (t / "in2.h5").string(), "--out",
                 (t / "out.h5").string()});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.output.find("no dataset 'v'; expected [1, 2, 16, dv]"), std::string::npos) << r.output;
  r = test::run({test::lrbench(), "attend", "--kernel", "sliding_windw", "--in", (t / "in2.h5").string(), "--out",
                 (t / "out.h5").string()});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.output.find("sliding_window"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(t / "out.h5"));
}

TEST(SlowAttendCommand, NonFiniteOutputsFromFiniteInputsAreRefusedNotWritten) {
  // q, k near 1e20 are finite in float32, but their products overflow: softmax and linear
  // wrote NaN with exit 0; so did pooling with every key masked.
  test::TempDir t;
  {
    h5::File f = h5::create_file(t / "big.h5");
    write_float(f, "q", at::full({1, 1, 8, 4}, 1e20));
    write_float(f, "k", at::full({1, 1, 8, 4}, 1e20));
    write_float(f, "v", at::randn({1, 1, 8, 4}));
    f.close();
  }
  for (const char* kernel : {"softmax", "linear"}) {
    auto r = test::run({test::lrbench(), "attend", "--kernel", kernel, "--in", (t / "big.h5").string(), "--out",
                        (t / "out.h5").string()});
    EXPECT_EQ(r.code, kExitUsage) << kernel << ": " << r.output;
    EXPECT_NE(r.output.find("non-finite output value(s)"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("|q| 1e+20"), std::string::npos) << r.output;
    EXPECT_FALSE(std::filesystem::exists(t / "out.h5"));
  }
  // TALA's bias spread is bounded where exp stays inside float32.
  auto r = test::run({test::lrbench(), "attend", "--kernel", "tala", "--opt", "bias=relative", "--opt", "bias_std=100", "--in",
                      (t / "big.h5").string(), "--out", (t / "out.h5").string()});
  EXPECT_EQ(r.code, kExitUsage) << r.output;
  EXPECT_NE(r.output.find("bias_std"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(t / "out.h5"));
}

}  // namespace
}  // namespace lrb
