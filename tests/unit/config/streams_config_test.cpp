// StreamsConfig*: [sweep] vary and fixed name random streams on their own (run_streams.h).
// Mistakes are refused with file:line:column; runs record the index each stream took, and
// sweeps without either keep their keys.
#include <gtest/gtest.h>

#include <set>

#include "suite/config/expand.h"
#include "suite/config/run_spec.h"
#include "suite/config/run_streams.h"
#include "suite/config/sweep_spec.h"
#include "tests/support/bad_sweeps.h"

namespace lrb {
namespace {

const char* kStreamsSweep = R"([sweep]
name = "streams"
seeds = 2
vary = { order = 3, init = 2 }
fixed = ["data"]

[train]
steps = 5
batch_size = 4

[[task]]
name = "listops"
seq_len = 64
train_size = 16

[[model]]
name = "transformer"
dim = 32
)";

std::string with(const std::string& from, const std::string& to) {
  std::string s = kStreamsSweep;
  const auto pos = s.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  return s.replace(pos, from.size(), to);
}

using BadCase = test::BadSweep;
class StreamsConfigBad : public ::testing::TestWithParam<BadCase> {};

TEST_P(StreamsConfigBad, NamesFileLineColumnAndSaysWhatToDo) { test::expect_refused(GetParam(), "bad.toml"); }

INSTANTIATE_TEST_SUITE_P(
    Table, StreamsConfigBad,
    ::testing::Values(
        BadCase{"unknown varied stream", with("init = 2", "inti = 2"), "bad.toml:4:21", "unknown random stream 'inti'; did you mean 'init'"},
        BadCase{"unknown fixed stream", with("[\"data\"]", "[\"dat\"]"), "bad.toml:5:10", "unknown random stream 'dat'"},
        BadCase{"both fixed and varied", with("[\"data\"]", "[\"init\"]"), "bad.toml:5:9", "both fixed and varied"},
        BadCase{"one level", with("init = 2", "init = 1"), "bad.toml:4:28", "between 2 and 32768"},
        BadCase{"too many levels", with("init = 2", "init = 40000"), "bad.toml:4:28", "between 2 and 32768"},
        BadCase{"levels not an integer", with("init = 2", "init = \"2\""), "bad.toml:4:28", "between 2 and 32768"},
        BadCase{"vary not a table", with("{ order = 3, init = 2 }", "[\"init\"]"), "bad.toml:4:8", "'vary' must be a table"},
        BadCase{"vary empty", with("{ order = 3, init = 2 }", "{}"), "bad.toml:4:8", "'vary' must be a table"},
        BadCase{"fixed not a list", with("[\"data\"]", "\"data\""), "bad.toml:5:9", "'fixed' must be a list"},
        BadCase{"fixed twice", with("[\"data\"]", "[\"data\", \"data\"]"), "bad.toml:5:18", "listed twice"},
        BadCase{"fixed not a string", with("[\"data\"]", "[1]"), "bad.toml:5:10", "a stream's name"},
        BadCase{"seed index beyond the key", with("seeds = 2", "seeds = [0, 40000]"), "bad.toml:4:8", "between 0 and 32767"},
        BadCase{"factorial over the run cap", with("init = 2", "init = 32768"), "bad.toml:4:8", "x the indices of each varied stream"}));

TEST(StreamsConfig, VaryCrossesTheNamedStreamsWithinEverySeedAndRecordsTheirIndices) {
  const ExpandedSweep ex = expand_sweep(parse_sweep(kStreamsSweep, "s.toml"));
  ASSERT_EQ(ex.runs.size(), 2u * 3u * 2u);
  // Seeds outermost, then the streams in kStreams' order (order before init), the last fastest.
  EXPECT_EQ(ex.runs[0].spec.at("streams"), json({{"data", 0}, {"order", 0}, {"init", 0}}));
  EXPECT_EQ(ex.runs[1].spec.at("streams"), json({{"data", 0}, {"order", 0}, {"init", 1}}));
  EXPECT_EQ(ex.runs[2].spec.at("streams"), json({{"data", 0}, {"order", 1}, {"init", 0}}));
  std::set<std::string> keys;
  std::set<std::int64_t> replicates;
  for (const RunSpec& r : ex.runs) {
    keys.insert(r.key);
    replicates.insert(replicate_of(r.spec));
    EXPECT_EQ(r.stream_index("data"), 0);
    EXPECT_EQ(r.stream_index("dropout"), r.seed_index());  // not named: follows the seed
    EXPECT_EQ(r.stream_index("init"), r.spec.at("streams").at("init").get<std::int64_t>());
    EXPECT_EQ(streams_problem(r.spec), "");
  }
  EXPECT_EQ(keys.size(), ex.runs.size());
  EXPECT_EQ(replicates.size(), ex.runs.size());  // every run its own tuple: none pairs with another
  EXPECT_EQ(seed_label(ex.runs[5].spec), "seed 0 data 0 order 2 init 1");
}

TEST(StreamsConfig, SweepsWithoutStreamsKeepTheirKeysAndPairBySeed) {
  std::string plain = kStreamsSweep;
  plain.erase(plain.find("vary ="), plain.find("[train]") - plain.find("vary ="));
  const ExpandedSweep ex = expand_sweep(parse_sweep(plain, "p.toml"));
  ASSERT_EQ(ex.runs.size(), 2u);
  EXPECT_FALSE(ex.runs[1].spec.contains("streams"));
  EXPECT_EQ(replicate_of(ex.runs[1].spec), 1);
  for (const auto& s : kStreams) EXPECT_EQ(ex.runs[1].stream_index(s.name), 1);
  EXPECT_EQ(seed_label(ex.runs[1].spec), "seed 1");
}

TEST(StreamsConfig, TheReplicateKeyIsTheTupleOfStreamIndices) {
  json spec = {{"seed_index", 3}};
  EXPECT_EQ(replicate_of(spec), 3);
  // Every stream at the seed's index draws what the plain run of that seed draws: it pairs with it.
  spec["streams"] = {{"init", 3}, {"data", 3}};
  EXPECT_EQ(replicate_of(spec), 3);
  spec["streams"] = {{"init", 1}, {"data", 0}};
  const std::int64_t packed = replicate_of(spec);
  EXPECT_GE(packed, std::int64_t{1} << 62);
  EXPECT_EQ(replicate_label(packed), "data 0 order 3 init 1 dropout 3");
  EXPECT_EQ(replicate_label(3), "seed 3");
  // Another run with the same effective tuple pairs with it, whatever its seed index says.
  EXPECT_EQ(replicate_of(json{{"seed_index", 0}, {"streams", {{"order", 3}, {"init", 1}, {"dropout", 3}}}}), packed);
  EXPECT_EQ(without_replicate(json{{"seed_index", 0}, {"streams", {{"init", 1}}}, {"task", 1}}), json({{"task", 1}}));
}

TEST(StreamsConfig, AStoredSpecWithStreamsItCannotReadIsNamed) {
  EXPECT_EQ(streams_problem(json{{"seed_index", 0}}), "");
  EXPECT_NE(streams_problem(json{{"seed_index", 0}, {"streams", json::array()}}), "");
  EXPECT_NE(streams_problem(json{{"seed_index", 0}, {"streams", {{"noise", 1}}}}).find("unknown stream 'noise'"), std::string::npos);
  EXPECT_NE(streams_problem(json{{"seed_index", 0}, {"streams", {{"init", -1}}}}), "");
  EXPECT_NE(streams_problem(json{{"seed_index", 0}, {"streams", {{"init", 40000}}}}), "");
  EXPECT_NE(streams_problem(json{{"seed_index", 0}, {"streams", {{"init", "1"}}}}), "");
  EXPECT_NE(streams_problem(json{{"seed_index", 99999}, {"streams", {{"init", 1}}}}), "");
  EXPECT_NE(streams_problem(json{{"streams", {{"init", 1}}}}), "");
}

}  // namespace
}  // namespace lrb
