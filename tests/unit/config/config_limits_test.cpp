// Sweep files at the limits: integers exact and in range (never through a double), sizes
// without overflow, names too long, empty sweeps, sweeps that would expand without bound,
// and files that are not sweep files at all (/dev/zero).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "suite/config/claim_spec.h"
#include "suite/config/expand.h"
#include "suite/config/sweep_spec.h"
#include "suite/config/train_settings.h"
#include "suite/core/files.h"

namespace lrb {
namespace {

namespace fs = std::filesystem;

// [sweep] (seeds = 1 unless `sweep_keys` says otherwise), [train], one task, `model`.
std::string sweep(const std::string& sweep_keys, const std::string& train = "steps = 5\n",
                  const std::string& model = "[[model]]\nname = \"transformer\"\ndim = 16\ndepth = 1\nheads = 2\n") {
  const std::string seeds = sweep_keys.find("seeds") == std::string::npos ? "seeds = 1\n" : "";
  return "[sweep]\nname = \"limits\"\n" + seeds + sweep_keys + "\n[train]\n" + train +
         "\n[[task]]\nname = \"listops\"\nseq_len = 32\ntrain_size = 8\n\n" + model;
}

// The message of the UserError that parsing and expanding `text` throws ("" if none).
std::string error_of(const std::string& text) {
  try {
    expand_sweep(parse_sweep(text, "l.toml"));
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

TEST(ConfigLimits, IntegersBeyondTheirRangeAreRefusedNotWrapped) {
  // 2^63 - 1 used to pass as a double, come back as -2^63, and run 0 steps "ok".
  const std::string e = error_of(sweep("", "steps = 9223372036854775807\n"));
  EXPECT_NE(e.find("l.toml:6:9:"), std::string::npos) << e;
  EXPECT_NE(e.find("'steps' must be at most " + std::to_string(kMaxTrainSteps) + ", got 9223372036854775807"), std::string::npos)
      << e;
  EXPECT_NE(error_of(sweep("", "batch_size = 4294967296\n")).find("must be at most 2147483647"), std::string::npos);
  EXPECT_NE(error_of(sweep("", "steps = -1\n")).find("must be at least 0, got -1"), std::string::npos);
  EXPECT_NE(error_of(sweep("checkpoint_every = 9223372036854775807\n")).find("must be at most 2147483647"),
            std::string::npos);
  // Within range, the value is kept exactly.
  const ExpandedSweep ex = expand_sweep(parse_sweep(sweep("", "steps = 5\neval_size = 2147483647\n"), "l.toml"));
  EXPECT_EQ(ex.runs[0].train.eval_size, 2147483647);
}

TEST(ConfigLimits, MemorySizesThatOverflowAreRefused) {
  for (const char* text : {"\"1e30\"", "\"16000000TiB\"", "\"9223372036854775807\"", "\"2EiB\"", "9223372036854775807"}) {
    const std::string e = error_of(sweep("", std::string("steps = 5\nmemory_budget = ") + text + "\n"));
    EXPECT_NE(e.find("'memory_budget'"), std::string::npos) << text << ": " << e;
    EXPECT_TRUE(e.find("too large") != std::string::npos || e.find("at most 1EiB") != std::string::npos) << text << ": " << e;
  }
  EXPECT_NE(error_of(sweep("", "memory_budget = \"-1GiB\"\n")).find("is not a size"), std::string::npos);
  EXPECT_NE(error_of(sweep("", "memory_budget = \"nan\"\n")).find("is not a size"), std::string::npos);
  EXPECT_NE(error_of(sweep("", "memory_budget = \"0x10\"\n")).find("is not a size"), std::string::npos);
  // Less than a byte used to round to 0, which is "no budget".
  EXPECT_NE(error_of(sweep("", "memory_budget = \"0.5B\"\n")).find("is less than one byte"), std::string::npos);
  EXPECT_NE(error_of(sweep("", "memory_budget = \"1e-12GiB\"\n")).find("is less than one byte"), std::string::npos);
  EXPECT_EQ(parse_bytes("0.6B"), 1);
  EXPECT_EQ(parse_bytes("0GiB"), 0);
  // Exact byte counts, including ones a double cannot hold.
  EXPECT_EQ(parse_bytes("16GiB"), std::int64_t{16} << 30);
  EXPECT_EQ(parse_bytes("1.5GiB"), std::int64_t{3} << 29);
  EXPECT_EQ(parse_bytes("1e9"), 1000000000);
  EXPECT_EQ(parse_bytes("1EiB"), std::int64_t{1} << 60);
  EXPECT_EQ(parse_bytes("9007199254740993"), std::int64_t{9007199254740993});
  EXPECT_THROW(parse_bytes("1152921504606846977"), std::invalid_argument);  // 2^60 + 1
  const ExpandedSweep ex = expand_sweep(parse_sweep(sweep("", "steps = 5\nmemory_budget = \"1EiB\"\n"), "l.toml"));
  EXPECT_EQ(ex.runs[0].train.memory_budget, std::int64_t{1} << 60);
}

TEST(ConfigLimits, BaseSeedsAreExactAndNeverShareRunKeys) {
  // 2^53 + 1 used to be stored as 2^53: two sweeps, one set of run keys.
  const ExpandedSweep a = expand_sweep(parse_sweep(sweep("base_seed = 9007199254740992\n"), "l.toml"));
  const ExpandedSweep b = expand_sweep(parse_sweep(sweep("base_seed = 9007199254740993\n"), "l.toml"));
  EXPECT_EQ(a.runs[0].base_seed(), 9007199254740992ull);
  EXPECT_EQ(b.runs[0].base_seed(), 9007199254740993ull);
  EXPECT_NE(a.runs[0].key, b.runs[0].key);
  const ExpandedSweep top = expand_sweep(parse_sweep(sweep("base_seed = 9223372036854775807\n"), "l.toml"));
  EXPECT_EQ(top.runs[0].base_seed(), 9223372036854775807ull);
  EXPECT_NE(error_of(sweep("base_seed = -1\n")).find("must be at least 0"), std::string::npos);
}

// A claim's cell selects runs by exact value: a seed of 2^53 + 1 is not one of 2^53.
TEST(ConfigLimits, ClaimCellsMatchIntegersExactly) {
  CellSelector cell;
  cell.match = {{"model.options.random_seed", json(std::int64_t{9007199254740993})}};
  const json spec = {{"model", {{"name", "bigbird"}, {"options", {{"random_seed", std::int64_t{9007199254740992}}}}}}};
  EXPECT_FALSE(cell.matches(spec));
  cell.match[0].second = json(std::int64_t{9007199254740992});
  EXPECT_TRUE(cell.matches(spec));
  cell.match[0].second = json(9007199254740992.0);  // a TOML float naming the same number
  EXPECT_TRUE(cell.matches(spec));
}

TEST(ConfigLimits, TooLongANameIsCalledTooLong) {
  const std::string e = error_of("[sweep]\nname = \"" + std::string(129, 'a') + "\"\n" +
                                 sweep("").substr(std::string("[sweep]\nname = \"limits\"\n").size()));
  EXPECT_NE(e.find("l.toml:2:8:"), std::string::npos) << e;
  EXPECT_NE(e.find("'name' is 129 characters long; at most 128"), std::string::npos) << e;
  EXPECT_EQ(e.find("letters"), std::string::npos) << e;
  EXPECT_EQ(name_problem(std::string(128, 'a')), "");
  EXPECT_NE(name_problem("a/b").find("only letters"), std::string::npos);
}

TEST(ConfigLimits, AnEmptySweepIsAConfigurationError) {
  const std::string no_models = error_of("model = []\n" + sweep("", "steps = 5\n", ""));
  EXPECT_NE(no_models.find("'model' is an empty list"), std::string::npos) << no_models;
  const std::string no_tasks = error_of("task = []\n[sweep]\nname = \"e\"\n[[model]]\nname = \"transformer\"\n");
  EXPECT_NE(no_tasks.find("'task' is an empty list"), std::string::npos) << no_tasks;
}

TEST(ConfigLimits, ExpansionBeyondTheLimitIsRefusedBeforeAnythingIsBuilt) {
  // 100000 seeds x 2 x 2 = 400000 runs: counted, refused, nothing built.
  const std::string e = error_of(sweep("seeds = 100000\n", "steps = 5\nlr = [1e-3, 2e-3]\n",
                                       "[[model]]\nname = \"transformer\"\ndim = 16\ndepth = 1\nheads = 2\n"
                                       "attention = [\"softmax\", \"linear\"]\n"));
  EXPECT_NE(e.find("expands to 400000 runs"), std::string::npos) << e;
  EXPECT_NE(e.find("limit of 10000"), std::string::npos) << e;
  EXPECT_NE(e.find("max_runs"), std::string::npos) << e;
  // Axes whose product overflows int64 are counted without overflow (200^6 x 10^6).
  const auto ints = [](int step) {
    std::string a = "[";
    for (int i = 1; i <= 200; ++i) a += std::to_string(i * step) + (i < 200 ? ", " : "]");
    return a;
  };
  const std::string tenths = "[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95]";
  const std::string huge_train = "steps = " + ints(1) + "\nwarmup_steps = " + ints(1) + "\neval_every = " + ints(1) +
                                 "\nbatch_size = " + ints(1) + "\neval_size = " + ints(1) + "\nlr = " + tenths +
                                 "\nmomentum = " + tenths + "\nbeta1 = " + tenths + "\nbeta2 = " + tenths +
                                 "\nweight_decay = " + tenths + "\ngrad_clip = " + tenths + "\n";
  const std::string he = error_of(sweep("", huge_train,
                                        "[[model]]\nname = \"transformer\"\ndim = " + ints(8) + "\ndepth = 1\nheads = 2\n"));
  EXPECT_NE(he.find("expands to more than 9e18 runs"), std::string::npos) << he;
  // The limit can be raised, up to a hard one.
  EXPECT_EQ(expand_sweep(parse_sweep(sweep("max_runs = 4\nseeds = [0, 1, 2, 3]\n"), "l.toml")).runs.size(), 4u);
  EXPECT_NE(error_of(sweep("max_runs = 3\nseeds = [0, 1, 2, 3]\n")).find("expands to 4 runs"), std::string::npos);
  EXPECT_NE(error_of(sweep("max_runs = 200001\n")).find("must be at most 200000"), std::string::npos);
}

TEST(ConfigLimits, OnlyARegularFileOfSaneSizeIsReadAsASweep) {
  try {
    load_sweep_file("/dev/zero");
    FAIL() << "/dev/zero was read";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("/dev/zero is not a regular file"), std::string::npos) << e.what();
  }
  const fs::path big = fs::temp_directory_path() / ("lrb_big_sweep_" + std::to_string(::getpid()) + ".toml");
  {
    std::ofstream out(big);
    out << sweep("") << "\n# " << std::string(kMaxSweepFileBytes, 'x') << "\n";
  }
  try {
    load_sweep_file(big);
    FAIL() << "a file of more than 1 MiB was read";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("at most 1048576 are read"), std::string::npos) << e.what();
  }
  fs::remove(big);
}

}  // namespace
}  // namespace lrb
