#pragma once
// A tensor's or an array's shape as text, "[2, 3, 16]": the one form every message uses.
// Takes any range of integers (std::vector<hsize_t>, std::vector<std::int64_t>,
// at::IntArrayRef, a tensor's sizes()).
#include <string>

namespace lrb {

template <class Dims>
std::string shape_text(const Dims& dims) {
  std::string s = "[";
  bool first = true;
  for (const auto d : dims) {
    if (!first) s += ", ";
    s += std::to_string(d);
    first = false;
  }
  return s + "]";
}

}  // namespace lrb
