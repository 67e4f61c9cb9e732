// lrbench attend --kernel tala: the kernel on the user's tensors, and a combination with no
// fixed-size state refused with exit code 2 and the reason.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "suite/core/exit_codes.h"
#include "suite/nn/attention/retention.h"
#include "suite/nn/attention/tala.h"
#include "suite/hdf5/h5.h"
#include "tests/support/h5_tensors.h"
#include "tests/support/subprocess.h"

namespace lrb {
namespace {

void write_float(const h5::File& f, const std::string& name, const at::Tensor& t) {
  test::write_tensor(f, name, t, at::kFloat);
}

at::Tensor read_out(const std::filesystem::path& path) { return test::read_tensor(path, "out", at::kFloat); }

TEST(SlowAttendTala, RunsEachReadingAndRefusesPairwiseRecurrence) {
  test::TempDir t;
  at::manual_seed(5);
  const at::Tensor q = at::randn({1, 2, 30, 4}), k = at::randn({1, 2, 30, 4}), v = at::randn({1, 2, 30, 4});
  {
    h5::File f = h5::create_file(t / "in.h5");
    write_float(f, "q", q);
    write_float(f, "k", k);
    write_float(f, "v", v);
    f.close();
  }
  auto attend = [&](std::vector<std::string> opts) {
    std::vector<std::string> argv = {test::lrbench(), "attend", "--kernel", "tala", "--in", (t / "in.h5").string(),
                                     "--out", (t / "out.h5").string()};
    for (auto& o : opts) {
      argv.push_back("--opt");
      argv.push_back(o);
    }
    return test::run(argv);
  };
  auto r = attend({"bias=relative", "window=4", "form=recurrent", "normalise=true", "seed=2"});
  ASSERT_EQ(r.code, kExitDone) << r.output;
  TalaOptions o;
  o.form = TalaForm::Parallel;
  o.bias = TalaBias::Relative;
  o.normalise = true;
  o.feature_map = TalaFeatureMap::ExpNorm;
  const at::Tensor g = tala_random_bias(TalaBias::Relative, 2, 30, 4, 0.5, 2).to(at::kFloat);
  EXPECT_TRUE(at::allclose(read_out(t / "out.h5"), tala(o, q, k, v, {}, {}, g), 1e-5, 1e-6));

  r = attend({"bias=pairwise", "form=chunkwise"});
  EXPECT_EQ(r.code, kExitUsage) << r.output;
  EXPECT_NE(r.output.find("bias=pairwise has no chunkwise form"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("not a fixed d x d state"), std::string::npos) << r.output;
  r = attend({"bias=pairwise", "form=parallel"});
  EXPECT_EQ(r.code, kExitDone) << r.output;
}

// The user's own decays (the paper's Eq. 13, 1 − e^(−h), h = 1..H) and G, read from IN.h5
// and written to OUT.h5 as used; without them, the G drawn from seed is written out.
TEST(SlowAttendTala, TakesTheUsersDecaysAndBiasAndWritesWhatItUsed) {
  test::TempDir t;
  at::manual_seed(6);
  const std::int64_t H = 3, N = 20;
  const at::Tensor q = at::randn({1, H, N, 4}), k = at::randn({1, H, N, 4}), v = at::randn({1, H, N, 4});
  const at::Tensor decays = 1.0 - at::exp(-at::arange(1, H + 1, at::kDouble));
  const at::Tensor g = 0.5 + at::rand({H, 6}, at::kDouble);  // relative, w = 5
  {
    h5::File f = h5::create_file(t / "in.h5");
    write_float(f, "q", q);
    write_float(f, "k", k);
    write_float(f, "v", v);
    test::write_tensor(f, "decays", decays, at::kDouble);
    test::write_tensor(f, "bias", g, at::kDouble);
    f.close();
  }
  auto r = test::run({test::lrbench(), "attend", "--kernel", "tala", "--opt", "bias=relative", "--opt", "form=recurrent", "--in",
                      (t / "in.h5").string(), "--out", (t / "out.h5").string()});
  ASSERT_EQ(r.code, kExitDone) << r.output;
  TalaOptions o;
  o.form = TalaForm::Parallel;
  o.bias = TalaBias::Relative;
  EXPECT_TRUE(at::allclose(read_out(t / "out.h5"), tala(o, q, k, v, {}, decays, g.to(at::kFloat)), 1e-5, 1e-6));
  EXPECT_TRUE(at::equal(test::read_tensor(t / "out.h5", "decays", at::kDouble), decays));
  EXPECT_TRUE(at::equal(test::read_tensor(t / "out.h5", "bias", at::kDouble), g));

  // A G of the wrong shape is named; without one, the G drawn from seed is what is written.
  {
    h5::File f = h5::create_file(t / "bad.h5");
    write_float(f, "q", q);
    write_float(f, "k", k);
    write_float(f, "v", v);
    test::write_tensor(f, "bias", at::ones({H, N, N - 1}, at::kDouble), at::kDouble);
    f.close();
  }
  r = test::run({test::lrbench(), "attend", "--kernel", "tala", "--opt", "bias=pairwise", "--opt", "form=parallel", "--in",
                 (t / "bad.h5").string(), "--out", (t / "o2.h5").string()});
  EXPECT_EQ(r.code, kExitUsage) << r.output;
  EXPECT_NE(r.output.find("bias=pairwise needs G [H, T, T]"), std::string::npos) << r.output;
  {
    h5::File f = h5::create_file(t / "plain.h5");
    write_float(f, "q", q);
    write_float(f, "k", k);
    write_float(f, "v", v);
    f.close();
  }
  r = test::run({test::lrbench(), "attend", "--kernel", "tala", "--opt", "bias=relative", "--opt", "window=4", "--opt", "seed=9",
                 "--in", (t / "plain.h5").string(), "--out", (t / "o3.h5").string()});
  ASSERT_EQ(r.code, kExitDone) << r.output;
  EXPECT_TRUE(at::equal(test::read_tensor(t / "o3.h5", "bias", at::kDouble), tala_random_bias(TalaBias::Relative, H, N, 4, 0.5, 9)));
  EXPECT_TRUE(at::equal(test::read_tensor(t / "o3.h5", "decays", at::kDouble), retention_decays(H)));
}

}  // namespace
}  // namespace lrb
