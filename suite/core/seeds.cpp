#include "suite/core/seeds.h"

#include <cmath>
#include <cstdlib>
#include <string>

#include "suite/core/errors.h"
#include "suite/core/sha256.h"

namespace lrb {

std::uint64_t derive_seed(std::uint64_t base_seed, std::uint64_t seed_index, std::string_view stream) {
  std::string material = "lrbench-seed/1|" + std::to_string(base_seed) + "|" + std::to_string(seed_index) +
                         "|" + std::string(stream);
  return sha256_u64(material);
}

namespace {
std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
}  // namespace

Rng::Rng(std::uint64_t seed) {
  for (auto& s : s_) s = splitmix64(seed);
}

void Rng::below_zero() { LRB_CHECK(false, "Rng::below(0)"); std::abort(); }

std::int64_t Rng::between(std::int64_t lo, std::int64_t hi) {
  LRB_CHECK(lo <= hi, "Rng::between with lo > hi");
  return lo + static_cast<std::int64_t>(below(static_cast<std::uint64_t>(hi - lo) + 1));
}

double Rng::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

double Rng::normal() {
  double u1 = uniform();
  while (u1 <= 0.0) u1 = uniform();
  const double u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

void Rng::set_state(const std::uint64_t s[4]) {
  for (int i = 0; i < 4; ++i) s_[i] = s[i];
}

}  // namespace lrb
