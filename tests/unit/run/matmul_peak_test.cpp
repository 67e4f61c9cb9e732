// Model FLOP utilisation (suite/run/matmul_peak.h): a step's FLOPs over its time over the
// measured matrix-product peak; the peak measured once and cached, a damaged cache measured
// again, never trusted.
#include <gtest/gtest.h>

#include <ATen/Parallel.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "suite/core/files.h"
#include "suite/run/derived_figures.h"
#include "suite/run/matmul_peak.h"
#include "tests/support/subprocess.h"

namespace lrb {
namespace {

namespace fs = std::filesystem;

TEST(MatmulPeak, AModelOfKnownFlopsAtAKnownStepTimeHasTheExpectedUtilisation) {
  // 1 GFLOP forward per sample, batch 32: 96 GFLOP a step; at 2 s a step, 48 GFLOP/s; on a
  // peak of 100 GFLOP/s that is 48 %, and 24 % of two such devices (a 2-rank group).
  const double step = training_step_flops(1e9, 32);
  EXPECT_DOUBLE_EQ(step, 96e9);
  EXPECT_DOUBLE_EQ(flop_utilisation(step / 2.0, 100e9, 1), 0.48);
  EXPECT_DOUBLE_EQ(flop_utilisation(step / 2.0, 100e9, 2), 0.24);
  EXPECT_TRUE(std::isnan(flop_utilisation(48e9, 0, 1))) << "an unmeasured peak gives no utilisation";
  EXPECT_TRUE(std::isnan(flop_utilisation(std::nan(""), 100e9, 1))) << "a model without a FLOP count gives none";
}

TEST(MatmulPeak, MeasuredOnceThenCachedAndADamagedCacheIsMeasuredAgain) {
  test::TempDir t;
  at::set_num_threads(1);
  const at::Device cpu(at::kCPU);
  const MatmulPeak first = matmul_peak(cpu, 1, t.path());
  EXPECT_EQ(first.source, "measured");
  EXPECT_GT(first.flops_per_s, 1e8) << "a float32 product slower than 0.1 GFLOP/s is no measurement";
  EXPECT_NE(first.what.find("float32 2048x2048 @ 2048x2048 on 1 thread (cpu)"), std::string::npos) << first.what;
  const MatmulPeak second = matmul_peak(cpu, 1, t.path());
  EXPECT_EQ(second.flops_per_s, first.flops_per_s);
  EXPECT_EQ(second.source.rfind("cached in ", 0), 0u) << second.source;
  fs::path file;
  for (const auto& e : fs::directory_iterator(t.path()))
    if (e.path().extension() == ".json") file = e.path();
  ASSERT_FALSE(file.empty());
  std::stringstream good;
  good << std::ifstream(file).rdbuf();
  nlohmann::json entry = nlohmann::json::parse(good.str());
  const std::string key = entry.begin().key();
  for (const std::string& damaged : {std::string(), good.str().substr(0, good.str().size() / 2), std::string("[1, 2]"),
                                    nlohmann::json{{key, {{"flops_per_s", -5}, {"what", "x"}}}}.dump(),
                                    nlohmann::json{{key, {{"flops_per_s", "fast"}, {"what", "x"}}}}.dump(),
                                    nlohmann::json{{key, 7}}.dump(), std::string("\0\xff", 2)}) {
    SCOPED_TRACE(damaged);
    test::write_text(file, damaged);
    const MatmulPeak again = matmul_peak(cpu, 1, t.path());
    EXPECT_EQ(again.source, "measured");
    EXPECT_GT(again.flops_per_s, 1e8);
  }
  // Another thread count is another figure, measured beside the first.
  const MatmulPeak two = matmul_peak(cpu, 2, t.path());
  EXPECT_EQ(two.source, "measured");
  EXPECT_EQ(nlohmann::json::parse(read_file(file)).size(), 2u);
}

}  // namespace
}  // namespace lrb
