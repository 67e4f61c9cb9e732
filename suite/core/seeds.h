#pragma once
// Matched seeds: seed index s derives every random stream of a run by hashing
// (base seed, s, stream name). Two models run at the same s see the same data in the same
// order, so comparisons pair by seed.
#include <array>
#include <cstdint>
#include <string_view>

namespace lrb {

std::uint64_t derive_seed(std::uint64_t base_seed, std::uint64_t seed_index, std::string_view stream);

// The streams every run uses; tasks may derive more of their own from kStreamData.
inline constexpr std::string_view kStreamData = "data";      // generating train/eval splits
inline constexpr std::string_view kStreamOrder = "order";    // the order of training samples
inline constexpr std::string_view kStreamInit = "init";      // parameter initialisation
inline constexpr std::string_view kStreamDropout = "dropout";// dropout and other training noise

// Every stream a run draws from, in the order a run's stream tuple lists them. A sweep may
// vary or fix each on its own ([sweep] vary / fixed: suite/config/run_streams.h); no model
// or task draws from another (tasks' splits and BigBird's block tables derive from the
// data stream or from an option).
struct StreamInfo {
  std::string_view name;
  std::string_view what;
};
inline constexpr std::array<StreamInfo, 4> kStreams = {{
    {kStreamData, "the task's generated data and its train/eval split"},
    {kStreamOrder, "the order of training samples"},
    {kStreamInit, "parameter initialisation"},
    {kStreamDropout, "dropout and other training noise"},
}};

// A small, portable generator (SplitMix64 seeding xoshiro256**): the same numbers on
// every platform and standard library, unlike std::uniform_int_distribution.
class Rng {
 public:
  explicit Rng(std::uint64_t seed);
  // Inline: a report of 100,000 runs draws a billion bootstrap indices.
  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Uniform integer in [0, n), n > 0, without modulo bias (Lemire's nearly divisionless
  // method).
  std::uint64_t below(std::uint64_t n) {
    if (n == 0) below_zero();
    unsigned __int128 m = static_cast<unsigned __int128>(next()) * n;
    std::uint64_t low = static_cast<std::uint64_t>(m);
    if (low < n) {
      const std::uint64_t threshold = (0 - n) % n;
      while (low < threshold) {
        m = static_cast<unsigned __int128>(next()) * n;
        low = static_cast<std::uint64_t>(m);
      }
    }
    return static_cast<std::uint64_t>(m >> 64);
  }
  // Uniform integer in [lo, hi] inclusive.
  std::int64_t between(std::int64_t lo, std::int64_t hi);
  // Uniform double in [0, 1) with 53 random bits.
  double uniform();
  // Standard normal (Box–Muller, no cached second value so the state is just s_).
  double normal();
  const std::uint64_t* state() const { return s_; }
  void set_state(const std::uint64_t s[4]);

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  [[noreturn]] static void below_zero();  // a broken invariant: aborts
  std::uint64_t s_[4];
};

}  // namespace lrb
