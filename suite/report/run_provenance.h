#pragma once
// The provenance that can make the same run give other numbers: the code, the libraries and
// the BLAS kernels, the processor or GPU, the threads. Read where the same run key gave two
// results (report_input.cpp) and where two builds' runs are compared (compare.h).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lrb {

// The provenance keys, in the order messages name them.
const std::vector<std::string>& result_provenance_keys();
// One key's value as text: "(none)" when not recorded; the processor's model name for "cpu"
// ("AMD EPYC, family 25 model 17" where the family and model were recorded); the GPU's name
// for "gpu" ("" on a CPU run).
std::string provenance_text(const nlohmann::json& provenance, const std::string& key);

}  // namespace lrb
