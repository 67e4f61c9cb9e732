#pragma once
// What claim_spec.cpp, claim_parse.cpp and claim_check.cpp share, and nothing else includes.
#include <string>

#include "suite/config/claim_spec.h"

namespace lrb::claim_detail {

ClaimKind claim_kind_from(const std::string& s);  // std::invalid_argument for an unknown kind
bool has_variant(const json& spec, const std::string& name);  // the run evaluates variant `name`
std::string path_name(const std::string& path);  // "model.options.attention" -> "attention"

}  // namespace lrb::claim_detail
