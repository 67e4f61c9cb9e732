// lrbench attend --kernel tala: the kernel on the user's tensors, and a combination with no
// fixed-size state refused with exit code 2 and the reason.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "suite/core/exit_codes.h"
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

}  // namespace
}  // namespace lrb
