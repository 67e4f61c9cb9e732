// The BLAS lrbench finds loaded (suite/core/environment.h): the kernels OpenBLAS chose, and
// whether they are older than the processor (Debian 12's OpenBLAS 0.3.21 falls back to SSE3
// "Prescott" kernels on AVX-512 processors it does not know, several times slower), said by
// `lrbench doctor` with the OPENBLAS_CORETYPE to set.
#include <gtest/gtest.h>

#include "suite/core/environment.h"
#include "suite/core/exit_codes.h"
#include "tests/support/subprocess.h"

namespace lrb {
namespace {

TEST(Environment, PhysicalCoresAreAtMostTheCpusThisProcessMayUse) {
  const int cpus = available_cores(), cores = available_physical_cores();
  EXPECT_GE(cores, 1);
  EXPECT_LE(cores, cpus);
  EXPECT_GE(cores * 8, cpus) << "no processor has more than 8 hardware threads per core";
}

TEST(Environment, ABlasCoreOlderThanTheProcessorHasABetterOne) {
  EXPECT_EQ(better_blas_core("Prescott", true, true), "SKYLAKEX");
  EXPECT_EQ(better_blas_core("Prescott", true, false), "HASWELL");
  EXPECT_EQ(better_blas_core("Sandybridge", true, false), "HASWELL");
  EXPECT_EQ(better_blas_core("Prescott", false, false), "") << "SSE3 is all an old processor has";
  for (const char* fine : {"SkylakeX", "COOPERLAKE", "Zen", "Haswell"}) EXPECT_EQ(better_blas_core(fine, true, true), "") << fine;
  EXPECT_EQ(better_blas_core("Haswell", true, false), "");
  // AVX2 kernels on an AVX-512 processor: not a fallback, a note naming the AVX-512 core.
  EXPECT_EQ(wider_blas_core("Haswell", true), "SKYLAKEX");
  EXPECT_EQ(wider_blas_core("ZEN", true), "SKYLAKEX");
  EXPECT_EQ(wider_blas_core("Haswell", false), "");
  for (const char* other : {"SkylakeX", "Cooperlake", "Prescott"}) EXPECT_EQ(wider_blas_core(other, true), "") << other;
}

TEST(Environment, DoctorNamesTheBlasCoreAndWarnsOfAFallback) {
  const BlasInfo blas = loaded_blas();
  if (blas.config.empty()) GTEST_SKIP() << "the BLAS loaded is not OpenBLAS (" << blas.library << "): scripts/setup.sh installs it";
  const auto doctor = test::run({test::lrbench(), "doctor"});
  ASSERT_EQ(doctor.code, kExitDone) << doctor.output;
  EXPECT_NE(doctor.output.find("BLAS core    "), std::string::npos) << doctor.output;
  // Forced to the SSE3 kernels on a processor with AVX2: the warning names the better core.
  if (!__builtin_cpu_supports("avx2")) return;
  const auto forced = test::run({test::lrbench(), "doctor"}, std::chrono::seconds(120), {"OPENBLAS_CORETYPE=PRESCOTT"});
  ASSERT_EQ(forced.code, kExitDone) << forced.output;
  EXPECT_NE(forced.output.find("BLAS core    Prescott (OPENBLAS_CORETYPE)"), std::string::npos) << forced.output;
  EXPECT_NE(forced.output.find(__builtin_cpu_supports("avx512f") ? "OPENBLAS_CORETYPE=SKYLAKEX" : "OPENBLAS_CORETYPE=HASWELL"),
            std::string::npos)
      << forced.output;
  // Set to AVX2 kernels: kept, and on an AVX-512 processor doctor notes the AVX-512 core.
  const auto avx2 = test::run({test::lrbench(), "doctor"}, std::chrono::seconds(120), {"OPENBLAS_CORETYPE=HASWELL"});
  ASSERT_EQ(avx2.code, kExitDone) << avx2.output;
  EXPECT_NE(avx2.output.find("BLAS core    Haswell (OPENBLAS_CORETYPE)"), std::string::npos) << avx2.output;
  EXPECT_EQ(avx2.output.find("WARNING: OpenBLAS runs its"), std::string::npos) << avx2.output;
  EXPECT_EQ(avx2.output.find("NOTE: OpenBLAS runs its Haswell kernels (AVX2), chosen by OPENBLAS_CORETYPE, on a processor "
                             "with AVX-512.") != std::string::npos,
            static_cast<bool>(__builtin_cpu_supports("avx512f")))
      << avx2.output;
}

}  // namespace
}  // namespace lrb
