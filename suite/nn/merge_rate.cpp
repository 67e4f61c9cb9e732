#include "suite/nn/merge_rate.h"

#include <cmath>
#include <numeric>

#include "suite/core/errors.h"

namespace lrb {

std::int64_t slice_multiple(std::int64_t g1, std::int64_t g2) {
  LRB_CHECK(g1 >= 1 && g2 >= 1, "group counts are positive");
  return std::lcm(g1, g2);
}

bool valid_merge_count(std::int64_t n, std::int64_t r, std::int64_t g) {
  return r >= 0 && r <= n / 2 && n - r >= g && (n - r) % g == 0;
}

std::int64_t merge_count(std::int64_t n, std::int64_t requested, std::int64_t g) {
  LRB_CHECK(g >= 1 && n >= 0, "a positive slice multiple");
  const std::int64_t want = std::max<std::int64_t>(0, requested);
  for (std::int64_t r = want; r <= n / 2; ++r)
    if (valid_merge_count(n, r, g)) return r;
  for (std::int64_t r = std::min(want, n / 2); r > 0; --r)
    if (valid_merge_count(n, r, g)) return r;
  return 0;
}

std::int64_t stage_merge_count(std::int64_t n, double rho, std::int64_t g) {
  LRB_CHECK(rho >= 0 && rho <= 1, "rho is a fraction");
  // The small slack keeps products such as 0.29 * 100 from flooring to 28.
  const auto floor_rho_n = static_cast<std::int64_t>(std::floor(rho * static_cast<double>(n) + 1e-9));
  return merge_count(n, floor_rho_n, g);
}

}  // namespace lrb
