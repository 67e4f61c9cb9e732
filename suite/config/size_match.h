#pragma once
// The width whose count comes nearest a target: `dim = { match = "params", to = 1e6 }` in a
// [[model]] table (sweep_spec.h). The count is the model's own (its parameters as built, or
// its analytic forward FLOPs), taken as non-decreasing in the width: the search doubles the
// width from the option's smallest value until the count reaches the target, then bisects,
// so it never counts a model much larger than the answer. Widths the model refuses (a
// `dim` that `heads` does not divide) are stepped over.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace lrb {

struct SizeSearch {
  std::int64_t smallest = 1, largest = 1;  // the option's range
  double to = 0;
  // The count at a width; nothing where the model refuses that width.
  std::function<std::optional<double>(std::int64_t)> count;
};

struct MatchedSize {
  std::int64_t value = 0;
  double count = 0;
};

// The nearest width (ties: the smaller), or why there is none: the target lies outside
// what the option's range reaches, or the model takes no width in it.
struct SizeMatchResult {
  std::optional<MatchedSize> size;
  std::string problem;  // "the smallest value, 8, already gives 1.2e+06"
};
SizeMatchResult match_size(const SizeSearch& search);

}  // namespace lrb
