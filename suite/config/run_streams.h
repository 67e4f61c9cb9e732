#pragma once
// Stream indices. A run draws each random stream (kStreams, suite/core/seeds.h) at an index:
// its seed index, unless the sweep's [sweep] vary or fixed names the stream. Such runs carry
// spec["streams"] = {stream: index} for the streams named (absent otherwise, so every other
// run keeps its key). Runs pair on the whole tuple of stream indices: replicate_of packs it
// into one integer, which is the seed index itself when every stream follows one seed.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "suite/core/seeds.h"

namespace lrb {

// The index each stream takes, in kStreams' order (data, order, init, dropout).
using StreamTuple = std::array<std::int64_t, kStreams.size()>;

// The largest stream index (and seed index) a run with named streams may take: its tuple
// is packed 15 bits a stream into the pairing key.
inline constexpr std::int64_t kMaxStreamIndex = 32767;

// Why a stored spec's streams cannot be read ("" when they can): an object of known streams,
// each an integer 0..kMaxStreamIndex, beside an integer seed index in that range. Run files
// are checked with it when read, so that the report can trust them.
std::string streams_problem(const nlohmann::json& spec);

std::int64_t stream_index(const nlohmann::json& spec, std::string_view stream);
StreamTuple stream_tuple(const nlohmann::json& spec);
// Whether the run names any stream (vary or fixed).
bool names_streams(const nlohmann::json& spec);

// What pairs runs across cells: the seed index when every stream follows it, otherwise the
// tuple packed with bit 62 set (never a seed index, which validation keeps below 2^62).
std::int64_t replicate_of(const nlohmann::json& spec);
// The tuple a replicate stands for: (s, s, s, s) for seed s.
StreamTuple tuple_of_replicate(std::int64_t replicate);
// "seed 3", or "data 0 order 2 init 1 dropout 3" for a packed tuple.
std::string replicate_label(std::int64_t replicate);
// One run's seed and the streams it names: "seed 3", "seed 3 init 1 order 2".
std::string seed_label(const nlohmann::json& spec);
// The spec without what differs between one setting's replicates (seed_index, streams).
nlohmann::json without_replicate(nlohmann::json spec);

}  // namespace lrb
