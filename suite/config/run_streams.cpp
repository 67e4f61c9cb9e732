#include "suite/config/run_streams.h"

#include <algorithm>

#include <fmt/format.h>

#include "suite/core/errors.h"

namespace lrb {

namespace {
constexpr int kBitsPerStream = 15;
constexpr std::int64_t kPackedFlag = std::int64_t{1} << 62;
static_assert(kMaxStreamIndex == (std::int64_t{1} << kBitsPerStream) - 1);
static_assert(kStreams.size() * kBitsPerStream < 62);
}  // namespace

std::string streams_problem(const nlohmann::json& spec) {
  if (!spec.is_object() || !spec.contains("streams")) return "";
  const nlohmann::json& streams = spec.at("streams");
  if (!streams.is_object() || streams.empty()) return "spec's streams is not an object of stream indices";
  const auto in_range = [](const nlohmann::json& v) {
    return v.is_number_integer() && v.get<std::int64_t>() >= 0 && v.get<std::int64_t>() <= kMaxStreamIndex;
  };
  for (const auto& item : streams.items()) {
    const std::string& name = item.key();  // not a structured binding: a lambda captures it
    const nlohmann::json& v = item.value();
    const bool known = std::any_of(kStreams.begin(), kStreams.end(), [&name](const StreamInfo& s) { return s.name == name; });
    if (!known) return "spec's streams names an unknown stream '" + name + "'";
    if (!in_range(v)) return "spec's stream '" + name + "' is not an index in 0.." + std::to_string(kMaxStreamIndex);
  }
  if (!spec.contains("seed_index") || !in_range(spec.at("seed_index")))
    return "spec names streams but its seed_index is not an index in 0.." + std::to_string(kMaxStreamIndex);
  return "";
}

bool names_streams(const nlohmann::json& spec) {
  const auto it = spec.find("streams");
  return it != spec.end() && it->is_object() && !it->empty();
}

std::int64_t stream_index(const nlohmann::json& spec, std::string_view stream) {
  if (const auto it = spec.find("streams"); it != spec.end() && it->is_object())
    if (const auto s = it->find(std::string(stream)); s != it->end()) return s->get<std::int64_t>();
  return spec.at("seed_index").get<std::int64_t>();
}

StreamTuple stream_tuple(const nlohmann::json& spec) {
  StreamTuple t{};
  for (std::size_t k = 0; k < kStreams.size(); ++k) t[k] = stream_index(spec, kStreams[k].name);
  return t;
}

std::int64_t replicate_of(const nlohmann::json& spec) {
  const std::int64_t seed = spec.at("seed_index").get<std::int64_t>();
  if (!names_streams(spec)) return seed;
  const StreamTuple t = stream_tuple(spec);
  bool all_seed = true;
  std::int64_t packed = kPackedFlag;
  for (std::size_t k = 0; k < t.size(); ++k) {
    // Validation (expand.cpp) keeps every index of a run with named streams in range; a
    // stored file that breaks it is damaged, and its key check has already refused it.
    LRB_CHECK(t[k] >= 0 && t[k] <= kMaxStreamIndex, "a stream index outside 0..32767");
    all_seed = all_seed && t[k] == seed;
    packed |= t[k] << (kBitsPerStream * static_cast<int>(kStreams.size() - 1 - k));
  }
  // Every stream at the seed index draws what the plain run of that seed draws.
  return all_seed ? seed : packed;
}

StreamTuple tuple_of_replicate(std::int64_t replicate) {
  StreamTuple t{};
  for (std::size_t k = 0; k < kStreams.size(); ++k)
    t[k] = replicate < kPackedFlag ? replicate
                                   : (replicate >> (kBitsPerStream * static_cast<int>(kStreams.size() - 1 - k))) & kMaxStreamIndex;
  return t;
}

std::string replicate_label(std::int64_t replicate) {
  if (replicate < kPackedFlag) return "seed " + std::to_string(replicate);
  const StreamTuple t = tuple_of_replicate(replicate);
  std::string out;
  for (std::size_t k = 0; k < kStreams.size(); ++k) out += fmt::format("{}{} {}", k ? " " : "", kStreams[k].name, t[k]);
  return out;
}

std::string seed_label(const nlohmann::json& spec) {
  std::string out = "seed " + std::to_string(spec.at("seed_index").get<std::int64_t>());
  if (!names_streams(spec)) return out;
  for (const auto& s : kStreams)
    if (const auto it = spec.at("streams").find(std::string(s.name)); it != spec.at("streams").end())
      out += fmt::format(" {} {}", s.name, it->get<std::int64_t>());
  return out;
}

nlohmann::json without_replicate(nlohmann::json spec) {
  spec.erase("seed_index");
  spec.erase("streams");
  return spec;
}

}  // namespace lrb
