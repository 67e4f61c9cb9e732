#pragma once
// A deterministic share of a sweep: shard I of N holds the runs whose key (a SHA-256 in hex)
// read as a number falls in class I mod N (the key's first 8 bytes). It depends on the run
// alone, so every array task of a Slurm job array, on any node and at any attempt, picks the
// same runs, and the N shards together hold every run exactly once.
#include <cstdint>
#include <string>
#include <string_view>

namespace lrb {

struct Shard {
  int index = 0;  // 0 <= index < count
  int count = 1;  // 1: the whole sweep
  bool whole() const { return count == 1; }
  std::string text() const;  // "I/N"
};

// Parses "I/N" (0 <= I < N <= kMaxShards); throws UserError saying what is wrong.
Shard parse_shard(std::string_view text);
inline constexpr int kMaxShards = 1000000;

// The shard (0..count-1) a run key belongs to: its first 16 hex digits mod count.
int shard_of(std::string_view run_key, int count);
inline bool in_shard(std::string_view run_key, const Shard& s) { return s.whole() || shard_of(run_key, s.count) == s.index; }

}  // namespace lrb
