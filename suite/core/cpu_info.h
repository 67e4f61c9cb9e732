#pragma once
// The processor a run computed on. Machines differ by 2x and more in a step's time, so every
// run file names its processor (provenance `cpu`) and `lrbench doctor` prints it.
#include <istream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lrb {

struct CpuInfo {
  std::string model_name;             // /proc/cpuinfo's "model name" ("AMD EPYC 9R14"); "" where unknown
  int family = -1, model = -1;        // x86 "cpu family" and "model" (which core design); -1 where unknown
  std::vector<std::string> features;  // the vector instructions lrbench's kernels and bf16 choose by
  nlohmann::json to_json() const;
  std::string text() const;  // "AMD EPYC (family 25, model 17); avx2 fma avx512f avx512_bf16"
};

// The first processor's entries of a /proc/cpuinfo text (features left empty).
CpuInfo parse_cpuinfo(std::istream& in);
// The vector instructions lrbench's kernels, bf16 and the BLAS core's choice go by, read once
// from cpuid (as the compiler's __builtin_cpu_supports reads it; no file read). The one place
// that asks, so what a run used and what its provenance names cannot disagree
// (lrbench-blas-check, which links no lrbench library, asks for itself).
struct CpuFlags {
  bool avx2 = false, fma = false, avx512f = false, avx512_bf16 = false, amx_bf16 = false;
};
const CpuFlags& cpu_flags();
// Their names, among avx2, fma, avx512f, avx512_bf16, amx_bf16, that this processor has.
std::vector<std::string> cpu_features();
// This machine's: /proc/cpuinfo, with cpu_features().
CpuInfo cpu_info();

}  // namespace lrb
