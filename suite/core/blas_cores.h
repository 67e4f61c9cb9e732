#pragma once
// Which OpenBLAS kernels a processor allows: shared by lrbench doctor, the provenance of
// every run (suite/core/environment.h) and the BLAS check the launcher runs before it
// starts lrbench-core (suite/cli/blas_check.cpp). No dependencies: the check is linked with
// the C++ library only.
#include <cctype>
#include <string>

namespace lrb {

// What to set OPENBLAS_CORETYPE to where OpenBLAS chose kernels `core` on a processor with
// these features, or "" when `core` already uses them (Debian 12's OpenBLAS 0.3.21 falls
// back to its SSE3 "Prescott" kernels on AVX-512 processors it does not know).
inline std::string better_blas_core(const std::string& core, bool avx2, bool avx512) {
  std::string c;
  for (char ch : core) c += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  // OpenBLAS's x86-64 cores with AVX-512 kernels, and with AVX2 ones (0.3.x names).
  static const char* const avx512_cores[] = {"skylakex", "cooperlake", "sapphirerapids"};
  static const char* const avx2_cores[] = {"haswell", "zen", "skylakex", "cooperlake", "sapphirerapids"};
  const auto in = [&](const auto& list) {
    for (const char* name : list)
      if (c == name) return true;
    return false;
  };
  if (avx512 && !in(avx512_cores) && !in(avx2_cores)) return "SKYLAKEX";
  if (avx2 && !in(avx2_cores)) return "HASWELL";
  return "";
}

// The AVX-512 core where `core` runs AVX2 kernels (Haswell, Zen) on a processor with AVX-512,
// else "". Not a fallback (better_blas_core): the launcher never replaces it, doctor only
// says so. An OPENBLAS_CORETYPE=Haswell left in an environment ran the one-thread 2048^3
// product at about 63 GFLOP/s on a Zen 5 whose own Cooperlake core ran it at 110-199.
inline std::string wider_blas_core(const std::string& core, bool avx512) {
  std::string c;
  for (char ch : core) c += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return avx512 && (c == "haswell" || c == "zen") ? "SKYLAKEX" : "";
}

}  // namespace lrb
