#pragma once
// Matched seeds: seed index s derives every random stream of a run by hashing
// (base seed, s, stream name). Two models run at the same s see the same data in the same
// order, so comparisons pair by seed.
#include <cstdint>
#include <string_view>

namespace lrb {

std::uint64_t derive_seed(std::uint64_t base_seed, std::uint64_t seed_index, std::string_view stream);

// The streams every run uses; tasks may derive more of their own from kStreamData.
inline constexpr std::string_view kStreamData = "data";      // generating train/eval splits
inline constexpr std::string_view kStreamOrder = "order";    // the order of training samples
inline constexpr std::string_view kStreamInit = "init";      // parameter initialisation
inline constexpr std::string_view kStreamDropout = "dropout";// dropout and other training noise

// A small, portable generator (SplitMix64 seeding xoshiro256**): the same numbers on
// every platform and standard library, unlike std::uniform_int_distribution.
class Rng {
 public:
  explicit Rng(std::uint64_t seed);
  std::uint64_t next();
  // Uniform integer in [0, n), n > 0, without modulo bias.
  std::uint64_t below(std::uint64_t n);
  // Uniform integer in [lo, hi] inclusive.
  std::int64_t between(std::int64_t lo, std::int64_t hi);
  // Uniform double in [0, 1) with 53 random bits.
  double uniform();
  // Standard normal (Box–Muller, no cached second value so the state is just s_).
  double normal();
  const std::uint64_t* state() const { return s_; }
  void set_state(const std::uint64_t s[4]);

 private:
  std::uint64_t s_[4];
};

}  // namespace lrb
