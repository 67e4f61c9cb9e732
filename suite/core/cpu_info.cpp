#include "suite/core/cpu_info.h"

#include <fstream>

#include "suite/core/text.h"

namespace lrb {

namespace {
std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t");
  return first == std::string::npos ? "" : s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

// "key\t\t: value" -> value, where the line's key (before the tabs) is exactly `key`.
bool entry(const std::string& line, const std::string& key, std::string& value) {
  const auto colon = line.find(':');
  if (colon == std::string::npos || trim(line.substr(0, colon)) != key) return false;
  value = trim(line.substr(colon + 1));
  return true;
}

int number_or(const std::string& text, int fallback) {
  try {
    std::size_t used = 0;
    const int v = std::stoi(text, &used);
    return used == text.size() ? v : fallback;
  } catch (const std::exception&) {
    return fallback;
  }
}
}  // namespace

CpuInfo parse_cpuinfo(std::istream& in) {
  CpuInfo c;
  bool name = false, family = false, model = false;
  std::string line, value;
  while (std::getline(in, line)) {
    if (line.empty() && (name || family || model)) break;  // the first processor's block ends
    if (!name && entry(line, "model name", value)) c.model_name = value, name = true;
    else if (!family && entry(line, "cpu family", value)) c.family = number_or(value, -1), family = true;
    else if (!model && entry(line, "model", value)) c.model = number_or(value, -1), model = true;
  }
  return c;
}

const CpuFlags& cpu_flags() {
  static const CpuFlags flags = [] {
    CpuFlags f;
    f.avx2 = __builtin_cpu_supports("avx2");
    f.fma = __builtin_cpu_supports("fma");
    f.avx512f = __builtin_cpu_supports("avx512f");
    f.avx512_bf16 = __builtin_cpu_supports("avx512bf16");
#if !defined(__clang__)  // clang 14 (scripts/fuzz.sh builds with it) does not know AMX's name
    f.amx_bf16 = __builtin_cpu_supports("amx-bf16");  // AMX also needs the kernel's permission, which LibTorch asks for
#endif
    return f;
  }();
  return flags;
}

std::vector<std::string> cpu_features() {
  const CpuFlags& f = cpu_flags();
  const std::pair<const char*, bool> known[] = {{"avx2", f.avx2},
                                                {"fma", f.fma},
                                                {"avx512f", f.avx512f},
                                                {"avx512_bf16", f.avx512_bf16},
                                                {"amx_bf16", f.amx_bf16}};
  std::vector<std::string> features;
  for (const auto& [feature, present] : known)
    if (present) features.emplace_back(feature);
  return features;
}

CpuInfo cpu_info() {
  std::ifstream in("/proc/cpuinfo");
  CpuInfo c = parse_cpuinfo(in);
  c.features = cpu_features();
  return c;
}

nlohmann::json CpuInfo::to_json() const {
  nlohmann::json j = {{"model_name", model_name}, {"features", features}};
  if (family >= 0) j["family"] = family;
  if (model >= 0) j["model"] = model;
  return j;
}

std::string CpuInfo::text() const {
  std::string s = model_name.empty() ? "unknown processor" : model_name;
  if (family >= 0 && model >= 0) s += " (family " + std::to_string(family) + ", model " + std::to_string(model) + ")";
  return s + "; " + (features.empty() ? std::string("no AVX2") : join(features, " "));
}

}  // namespace lrb
