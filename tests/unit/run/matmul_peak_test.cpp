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

// Timings a test chooses: every repetition at `rate` (and `one_thread` on one thread).
PeakMeasurer steady(double rate, double one_thread = 0, int* calls = nullptr) {
  return [=](const at::Device&, int threads) {
    if (calls) ++*calls;
    PeakTimings t;
    t.rates = {rate, rate * 0.99, rate * 0.98};
    if (threads > 1) t.one_thread_rates = {one_thread > 0 ? one_thread : rate / threads};
    return t;
  };
}

TEST(MatmulPeak, TheRealProductIsTimedOnTheThreadsAskedFor) {
  at::set_num_threads(1);
  const MatmulPeak p = matmul_peak(at::Device(at::kCPU), 1, fs::path());
  EXPECT_EQ(p.source, "measured");
  EXPECT_GT(p.flops_per_s, 1e8) << "a float32 product slower than 0.1 GFLOP/s is no measurement";
  EXPECT_NE(p.what.find("float32 2048x2048 @ 2048x2048 on 1 thread (cpu)"), std::string::npos) << p.what;
  EXPECT_EQ(at::get_num_threads(), 1) << "the caller's thread count is restored";
}

TEST(MatmulPeak, MeasuredOnceThenCachedAndADamagedCacheIsMeasuredAgain) {
  test::TempDir t;
  const at::Device cpu(at::kCPU);
  const MatmulPeak first = matmul_peak(cpu, 1, t.path(), steady(50e9));
  EXPECT_EQ(first.source, "measured");
  EXPECT_EQ(first.flops_per_s, 50e9);
  EXPECT_TRUE(first.suspect.empty()) << first.suspect;
  int calls = 0;
  const MatmulPeak second = matmul_peak(cpu, 1, t.path(), steady(1e9, 0, &calls));
  EXPECT_EQ(calls, 0) << "a checked peak is read from the cache";
  EXPECT_EQ(second.flops_per_s, 50e9);
  EXPECT_EQ(second.source.rfind("cached in ", 0), 0u) << second.source;
  fs::path file;
  for (const auto& e : fs::directory_iterator(t.path()))
    if (e.path().extension() == ".json") file = e.path();
  ASSERT_FALSE(file.empty());
  std::stringstream good;
  good << std::ifstream(file).rdbuf();
  nlohmann::json entry = nlohmann::json::parse(good.str());
  const std::string key = entry.begin().key();
  EXPECT_EQ(entry.at(key).at("checked"), true);
  EXPECT_TRUE(entry.at(key).contains("load")) << "the load it was measured under is recorded";
  // Damaged, and unchecked: an entry from before the checks (no `checked`) is not trusted.
  for (const std::string& damaged : {std::string(), good.str().substr(0, good.str().size() / 2), std::string("[1, 2]"),
                                    nlohmann::json{{key, {{"flops_per_s", -5}, {"what", "x"}, {"checked", true}}}}.dump(),
                                    nlohmann::json{{key, {{"flops_per_s", "fast"}, {"what", "x"}, {"checked", true}}}}.dump(),
                                    nlohmann::json{{key, {{"flops_per_s", 9e9}, {"what", "x"}}}}.dump(),
                                    nlohmann::json{{key, {{"flops_per_s", 9e9}, {"what", "x"}, {"checked", "yes"}}}}.dump(),
                                    nlohmann::json{{key, 7}}.dump(), std::string("\0\xff", 2)}) {
    SCOPED_TRACE(damaged);
    test::write_text(file, damaged);
    const MatmulPeak again = matmul_peak(cpu, 1, t.path(), steady(40e9));
    EXPECT_EQ(again.source, "measured");
    EXPECT_EQ(again.flops_per_s, 40e9);
  }
  // Another thread count is another figure, measured beside the first.
  const MatmulPeak two = matmul_peak(cpu, 2, t.path(), steady(80e9, 41e9));
  EXPECT_EQ(two.source, "measured");
  EXPECT_TRUE(two.suspect.empty()) << two.suspect;
  EXPECT_EQ(nlohmann::json::parse(read_file(file)).size(), 2u);
}

// doctor on a busy 2-core host: 72.8 GFLOP/s on 2 threads against 121.8 on 1. Such a figure
// is marked suspect, tried again, and cached only for a while, marked; a later measurement on
// idle cores replaces it.
TEST(MatmulPeak, AMeasurementUnderLoadIsSuspectAndCachedOnlyForAWhile) {
  EXPECT_EQ(peak_suspect({{50e9, 49e9, 48e9}, {}}, 1), "");
  EXPECT_EQ(peak_suspect({{100e9, 98e9, 99e9}, {55e9, 54e9}}, 2), "");
  EXPECT_NE(peak_suspect({{50e9, 20e9, 48e9}, {}}, 1).find("its repeats disagree: 20.0 to 50.0 GFLOP/s"), std::string::npos);
  EXPECT_NE(peak_suspect({{72.8e9, 72e9, 71e9}, {121.8e9}}, 2).find("2 threads were slower than 1 (72.8 against 121.8 GFLOP/s)"),
            std::string::npos);
  EXPECT_EQ(peak_suspect({{}, {}}, 1), "no product could be timed");
  EXPECT_EQ(peak_suspect({{0.0, 0.0}, {}}, 1), "no product could be timed");

  test::TempDir t;
  const at::Device cpu(at::kCPU);
  int calls = 0;
  const MatmulPeak busy = matmul_peak(cpu, 2, t.path(), steady(72.8e9, 121.8e9, &calls));
  EXPECT_EQ(calls, kPeakAttempts) << "tried again before it is used";
  EXPECT_NE(busy.suspect.find("slower than 1"), std::string::npos) << busy.suspect;
  EXPECT_NE(busy.suspect.find("3 attempts"), std::string::npos) << busy.suspect;
  EXPECT_EQ(busy.to_json().at("suspect"), busy.suspect);
  // The next job soon after reads it, suspect as it is, rather than measuring again.
  calls = 0;
  const MatmulPeak soon = matmul_peak(cpu, 2, t.path(), steady(230e9, 121.8e9, &calls));
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(soon.flops_per_s, 72.8e9);
  EXPECT_EQ(soon.suspect, busy.suspect);
  EXPECT_EQ(soon.source.rfind("cached in ", 0), 0u) << soon.source;
  // Later (the entry aged past kSuspectPeakReuseSeconds), on idle cores: measured again, kept.
  fs::path file;
  for (const auto& e : fs::directory_iterator(t.path()))
    if (e.path().extension() == ".json") file = e.path();
  ASSERT_FALSE(file.empty());
  nlohmann::json cache = nlohmann::json::parse(read_file(file));
  ASSERT_EQ(cache.size(), 1u);
  auto& entry = cache.begin().value();
  entry["measured_unix"] = entry.at("measured_unix").get<double>() - kSuspectPeakReuseSeconds - 1;
  test::write_text(file, cache.dump());
  const MatmulPeak idle = matmul_peak(cpu, 2, t.path(), steady(230e9, 121.8e9));
  EXPECT_EQ(idle.source, "measured");
  EXPECT_TRUE(idle.suspect.empty()) << idle.suspect;
  EXPECT_EQ(idle.flops_per_s, 230e9);
  const MatmulPeak kept = matmul_peak(cpu, 2, t.path(), steady(1e9));
  EXPECT_EQ(kept.source.rfind("cached in ", 0), 0u);
  EXPECT_TRUE(kept.suspect.empty());
  EXPECT_FALSE(nlohmann::json::parse(read_file(file)).begin().value().contains("suspect"));
  // A suspect first attempt followed by a sound one: the sound one is used, not suspect.
  int tries = 0;
  const PeakMeasurer settles = [&](const at::Device&, int) {
    ++tries;
    return tries == 1 ? PeakTimings{{90e9, 30e9, 60e9}, {}} : PeakTimings{{61e9, 60e9, 60e9}, {}};
  };
  const MatmulPeak settled = matmul_peak(cpu, 1, fs::path(), settles);
  EXPECT_EQ(tries, 2);
  EXPECT_TRUE(settled.suspect.empty()) << settled.suspect;
  EXPECT_EQ(settled.flops_per_s, 61e9);
}

}  // namespace
}  // namespace lrb
