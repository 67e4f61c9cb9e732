#include "suite/config/shard.h"

#include <charconv>

#include "suite/core/errors.h"

namespace lrb {

std::string Shard::text() const { return std::to_string(index) + "/" + std::to_string(count); }

namespace {
bool parse_int(std::string_view s, int& out) {
  if (s.empty() || s.size() > 9) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}
}  // namespace

Shard parse_shard(std::string_view text) {
  const auto slash = text.find('/');
  Shard s;
  if (slash == std::string_view::npos || !parse_int(text.substr(0, slash), s.index) ||
      !parse_int(text.substr(slash + 1), s.count))
    throw UserError("--shard '" + std::string(text) + "' is not I/N (two whole numbers, e.g. 0/3 for the first of three shards)");
  if (s.count < 1 || s.count > kMaxShards)
    throw UserError("--shard " + std::string(text) + ": the number of shards must be between 1 and " + std::to_string(kMaxShards));
  if (s.index >= s.count)
    throw UserError("--shard " + std::string(text) + ": shards are numbered 0.." + std::to_string(s.count - 1));
  return s;
}

int shard_of(std::string_view run_key, int count) {
  if (count <= 1) return 0;
  std::uint64_t v = 0;
  const std::string_view head = run_key.substr(0, 16);
  const auto [end, ec] = std::from_chars(head.data(), head.data() + head.size(), v, 16);
  // Run keys are SHA-256 in hex; anything else is a broken invariant, not a user error.
  LRB_CHECK(head.size() == 16 && ec == std::errc() && end == head.data() + head.size(),
            "shard_of: '" + std::string(run_key) + "' is not a run key");
  return static_cast<int>(v % static_cast<std::uint64_t>(count));
}

}  // namespace lrb
