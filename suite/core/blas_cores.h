#pragma once
// Which OpenBLAS kernels a processor allows: shared by lrbench doctor, the provenance of
// every run (suite/core/environment.h) and the BLAS check the launcher runs before it
// starts lrbench-core (suite/cli/blas_check.cpp). No dependencies: the check is linked with
// the C++ library only.
#include <cctype>
#include <initializer_list>
#include <string>

namespace lrb {

namespace blas_cores_detail {
// OpenBLAS's x86-64 cores (0.3.x names, lower case): those with AVX-512 kernels, and those
// whose best kernels are AVX2.
inline bool named(const std::string& core, std::initializer_list<const char*> names) {
  std::string c;
  for (char ch : core) c += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  for (const char* name : names)
    if (c == name) return true;
  return false;
}
inline bool avx512_core(const std::string& core) { return named(core, {"skylakex", "cooperlake", "sapphirerapids"}); }
inline bool avx2_only_core(const std::string& core) { return named(core, {"haswell", "zen"}); }
}  // namespace blas_cores_detail

// What to set OPENBLAS_CORETYPE to where OpenBLAS chose kernels `core` on a processor with
// these features, or "" when `core` already uses them (Debian 12's OpenBLAS 0.3.21 falls
// back to its SSE3 "Prescott" kernels on AVX-512 processors it does not know).
inline std::string better_blas_core(const std::string& core, bool avx2, bool avx512) {
  using namespace blas_cores_detail;
  const bool vector_core = avx512_core(core) || avx2_only_core(core);
  if (avx512 && !vector_core) return "SKYLAKEX";
  if (avx2 && !vector_core) return "HASWELL";
  return "";
}

// The AVX-512 core where `core` runs AVX2 kernels (Haswell, Zen) on a processor with AVX-512,
// else "". Not a fallback (better_blas_core): the launcher never replaces it, doctor only
// says so. An OPENBLAS_CORETYPE=Haswell left in an environment ran the one-thread 2048^3
// product at about 63 GFLOP/s on a Zen 5 whose own Cooperlake core ran it at 110-199.
inline std::string wider_blas_core(const std::string& core, bool avx512) {
  return avx512 && blas_cores_detail::avx2_only_core(core) ? "SKYLAKEX" : "";
}

}  // namespace lrb
