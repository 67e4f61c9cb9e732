// The processor named in every run's provenance and by `lrbench doctor` (suite/core/cpu_info.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "suite/core/cpu_info.h"

namespace lrb {
namespace {

TEST(CpuInfo, ReadsTheFirstProcessorsNameFamilyAndModel) {
  std::istringstream text(
      "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\n"
      "model name\t: AMD EPYC 9R14 96-Core Processor\nflags\t\t: fpu avx2\n\n"
      "processor\t: 1\ncpu family\t: 6\nmodel\t\t: 207\nmodel name\t: Intel(R) Xeon(R)\n\n");
  const CpuInfo c = parse_cpuinfo(text);
  EXPECT_EQ(c.model_name, "AMD EPYC 9R14 96-Core Processor");  // "model name" is not "model"
  EXPECT_EQ(c.family, 25);
  EXPECT_EQ(c.model, 17);
  EXPECT_EQ(c.to_json()["family"], 25);
  EXPECT_EQ(c.text(), "AMD EPYC 9R14 96-Core Processor (family 25, model 17); no AVX2");
}

TEST(CpuInfo, WhatItCannotReadIsLeftOutNotGuessed) {
  std::istringstream text("processor\t: 0\nmodel\t\t: seventeen\nCPU implementer\t: 0x41\n\n");
  const CpuInfo c = parse_cpuinfo(text);
  EXPECT_EQ(c.model_name, "");
  EXPECT_EQ(c.family, -1);
  EXPECT_EQ(c.model, -1);
  EXPECT_FALSE(c.to_json().contains("family"));
  EXPECT_FALSE(c.to_json().contains("model"));
  EXPECT_EQ(c.text(), "unknown processor; no AVX2");
}

TEST(CpuInfo, ThisMachinesProcessorAndItsVectorInstructions) {
  const CpuInfo c = cpu_info();
  EXPECT_FALSE(c.model_name.empty());
  EXPECT_GE(c.family, 0);
  const bool avx2 = std::find(c.features.begin(), c.features.end(), "avx2") != c.features.end();
  EXPECT_EQ(avx2, static_cast<bool>(__builtin_cpu_supports("avx2")));
}

}  // namespace
}  // namespace lrb
