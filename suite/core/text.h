#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace lrb {
// Edit distance (insert, delete, substitute, adjacent transposition).
std::size_t edit_distance(std::string_view a, std::string_view b);
// "; did you mean 'x'?" for the closest candidate within a small distance, else a list of
// what is allowed ("; expected one of: a, b, c").
std::string suggestion(std::string_view given, const std::vector<std::string>& candidates);
std::string join(const std::vector<std::string>& parts, std::string_view sep);
}  // namespace lrb
