#include "suite/report/run_provenance.h"

namespace lrb {

const std::vector<std::string>& result_provenance_keys() {
  static const std::vector<std::string> keys = {"git_revision", "lrbench_version", "torch_version", "blas", "blas_core",
                                                "openblas_coretype", "threads", "mpi_library", "hdf5_version", "cpu", "gpu"};
  return keys;
}

std::string provenance_text(const nlohmann::json& p, const std::string& key) {
  if (!p.is_object() || !p.contains(key)) return key == "gpu" ? "" : "(none)";
  const nlohmann::json& v = p.at(key);
  if (key == "cpu" && v.is_object()) {
    std::string s = v.value("model_name", std::string("?"));
    if (v.contains("family") && v.contains("model"))
      s += ", family " + v.at("family").dump() + " model " + v.at("model").dump();
    return s;
  }
  if (key == "gpu" && v.is_object()) return v.value("name", std::string("?"));
  return v.is_string() ? v.get<std::string>() : v.dump();
}

}  // namespace lrb
