// Sweep files: every mistake is an error with file:line:column and a hint, and nothing runs.
#include <gtest/gtest.h>

#include <filesystem>

#include "suite/config/expand.h"
#include "suite/config/setting_values.h"
#include "suite/config/sweep_spec.h"
#include "suite/registry/registry.h"
#include "tests/support/bad_sweeps.h"

namespace lrb {
namespace {

const char* kGood = R"(
[sweep]
name = "t"
seeds = 2
base_seed = 7

[train]
steps = 5
batch_size = 4

[[task]]
name = "listops"
seq_len = [64, 128]
train_size = 16

[[model]]
name = "transformer"
dim = 32
attention = ["softmax", "linear"]
)";

using BadCase = test::BadSweep;

std::string with(const std::string& from, const std::string& to) {
  std::string s = kGood;
  const auto pos = s.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  return s.replace(pos, from.size(), to);
}


class ConfigBad : public ::testing::TestWithParam<BadCase> {};

TEST_P(ConfigBad, NamesFileLineColumnAndSaysWhatToDo) {
  test::expect_refused(GetParam(), "bad.toml");
}

INSTANTIATE_TEST_SUITE_P(
    Table, ConfigBad,
    ::testing::Values(
        BadCase{"unknown train key", with("steps = 5", "stepz = 5"), "bad.toml:8:1", "did you mean 'steps'"},
        BadCase{"unknown section", with("[train]", "[trian]"), "bad.toml:7:2", "did you mean 'train'"},
        BadCase{"unknown sweep key", with("base_seed = 7", "baseseed = 7"), "bad.toml:5:1", "did you mean 'base_seed'"},
        BadCase{"ill-typed value", with("steps = 5", "steps = \"five\""), "bad.toml:8:9", "must be an integer"},
        BadCase{"float for int", with("batch_size = 4", "batch_size = 4.5"), "bad.toml:9:14", "must be an integer"},
        BadCase{"out of range", with("batch_size = 4", "batch_size = 0"), "bad.toml:9:14", "must be at least 1, got 0"},
        BadCase{"bad choice", with("name = \"t\"", "name = \"t\"\ndevice = \"gpu\""), "bad.toml:4:10", "has no value \"gpu\"; did you mean 'cpu'"},
        BadCase{"unknown model", with("name = \"transformer\"", "name = \"transfomer\""), "bad.toml:17:8", "did you mean 'transformer'"},
        BadCase{"unknown task", with("name = \"listops\"", "name = \"listop\""), "bad.toml:12:8", "did you mean 'listops'"},
        BadCase{"unknown model option", with("dim = 32", "dimm = 32"), "bad.toml:18:1", "did you mean 'dim'"},
        BadCase{"unknown task option", with("train_size = 16", "trainsize = 16"), "bad.toml:14:1", "did you mean 'train_size'"},
        BadCase{"bad axis value", with("[\"softmax\", \"linear\"]", "[\"softmax\", \"lineer\"]"), "bad.toml:19:25", "did you mean 'linear'"},
        BadCase{"cross-option rule", with("dim = 32", "dim = 30"), "bad.toml:18:1", "must divide dim"},
        BadCase{"missing seq_len", with("seq_len = [64, 128]", ""), "bad.toml:11:1", "needs 'seq_len'"},
        BadCase{"unsafe sweep name", with("name = \"t\"", "name = \"../x\""), "bad.toml:3:8", "only letters"},
        BadCase{"threads word", with("base_seed = 7", "threads = \"many\""), "bad.toml:5:11", "\"auto\" or a number"},
        BadCase{"syntax error", with("steps = 5", "steps = = 5"), "bad.toml:8:9", "TOML syntax error"},
        BadCase{"duplicate axis value", with("seq_len = [64, 128]", "seq_len = [64, 64]"), "bad.toml:13:16", "'seq_len' lists 64 twice"},
        BadCase{"task as table", with("[[task]]", "[task]"), "bad.toml:11:1", "write [[task]]"},
        BadCase{"duplicate model table", std::string(kGood) + "\n[[model]]\nname = \"transformer\"\ndim = 32\n", "bad.toml:21:1", "same run as an earlier one"},
        BadCase{"listops length rule", with("train_size = 16", "max_length = 500"), "bad.toml:14:1", "longer than seq_len"},
        BadCase{"no ranks per run", with("base_seed = 7", "base_seed = 7\nranks_per_run = 0"), "bad.toml:6:17", "must be at least 1, got 0"},
        BadCase{"ranks per run beyond the batch", with("base_seed = 7", "base_seed = 7\nranks_per_run = 8"), "bad.toml:10:1",
                "smaller than ranks_per_run = 8"},
        BadCase{"ranks per run measured", with("base_seed = 7", "base_seed = 7\nranks_per_run = 2") + "\n[measure]\nsteps = 2\n",
                "bad.toml:6:17", "with [measure]"},
        BadCase{"unknown exchange", with("base_seed = 7", "base_seed = 7\nexchange = \"nccll\""), "bad.toml:6:12",
                "has no value \"nccll\"; did you mean 'nccl'"},
        BadCase{"nccl exchange on the cpu", with("base_seed = 7", "base_seed = 7\nexchange = \"nccl\""), "bad.toml:6:12",
                "exchange = \"nccl\" sums gradients on CUDA devices, and this sweep runs on device = \"cpu\""},
        BadCase{"no runs per gpu", with("base_seed = 7", "base_seed = 7\nruns_per_gpu = 0"), "bad.toml:6:16", "must be at least 1, got 0"},
        BadCase{"runs per gpu past 64", with("base_seed = 7", "base_seed = 7\nruns_per_gpu = 65"), "bad.toml:6:16", "at most 64"},
        BadCase{"runs per gpu on the cpu", with("base_seed = 7", "base_seed = 7\nruns_per_gpu = 4"), "bad.toml:6:16",
                "runs_per_gpu shares GPUs between ranks, and this sweep runs on device = \"cpu\""},
        BadCase{"runs per gpu with a data-parallel run",
                with("base_seed = 7", "base_seed = 7\ndevice = \"cuda\"\nruns_per_gpu = 4\nranks_per_run = 2"), "bad.toml:7:16",
                "runs_per_gpu > 1 with ranks_per_run > 1"},
        BadCase{"unknown precision", with("steps = 5", "steps = 5\nprecision = \"fp16\""), "bad.toml:9:13",
                "has no value \"fp16\""}),
    [](const ::testing::TestParamInfo<BadCase>& i) {
      std::string n = i.param.name;
      for (auto& ch : n)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return n;
    });

TEST(ConfigGood, ExpandsInDeterministicOrderWithStableKeys) {
  const SweepSpec spec = parse_sweep(kGood, "good.toml");
  const ExpandedSweep ex = expand_sweep(spec);
  // 2 seq_len x 2 attention x 2 seeds, seeds innermost.
  ASSERT_EQ(ex.runs.size(), 8u);
  EXPECT_EQ(ex.runs[0].seq_len(), 64);
  EXPECT_EQ(ex.runs[0].model_options()["attention"], "softmax");
  EXPECT_EQ(ex.runs[1].seed_index(), 1);
  EXPECT_EQ(ex.runs[2].model_options()["attention"], "linear");
  EXPECT_EQ(ex.runs[4].seq_len(), 128);
  // Every default is resolved into the spec.
  EXPECT_EQ(ex.runs[0].task_options()["max_length"], 64);
  EXPECT_EQ(ex.runs[0].task_options()["min_length"], 16);
  EXPECT_EQ(ex.runs[0].train.optimizer, "adamw");
  EXPECT_EQ(ex.runs[0].model_options()["depth"], 2);
  // The same file gives the same keys; thread count and rank are not part of them.
  const ExpandedSweep again = expand_sweep(parse_sweep(kGood, "elsewhere.toml"));
  for (std::size_t i = 0; i < ex.runs.size(); ++i) EXPECT_EQ(ex.runs[i].key, again.runs[i].key);
  std::string threads = kGood;
  threads.insert(threads.find("base_seed"), "threads = 3\ncheckpoint_every = 10\n");
  const ExpandedSweep threaded = expand_sweep(parse_sweep(threads, "t.toml"));
  for (std::size_t i = 0; i < ex.runs.size(); ++i) EXPECT_EQ(ex.runs[i].key, threaded.runs[i].key);
}

// A model and a task that exist only for the golden test, so that their keys change only
// when the canonical form of a RunSpec (or the [train] schema) changes, not when a real
// model gains an option.
TaskEntry golden_task() {
  TaskEntry e;
  e.name = "golden-task";
  e.summary = "test only";
  e.schema.options = {{"size", OptionType::Int, json(8), "", {}, 1, {}}};
  e.describe = [](const json&, std::int64_t n) {
    TaskInfo t;
    t.input_shape = {n};
    t.num_classes = 2;
    t.vocab_size = 4;
    t.metrics = {"accuracy"};
    return t;
  };
  return e;
}
ModelEntry golden_model() {
  ModelEntry e;
  e.name = "golden-model";
  e.summary = "test only";
  e.modalities = {Modality::Tokens};
  e.schema.options = {{"width", OptionType::Int, json(4), "", {}, 1, {}}, {"kind", OptionType::String, json("a"), "", {"a", "b"}}};
  return e;
}
LRB_REGISTER_TASK(golden_task());
LRB_REGISTER_MODEL(golden_model());

TEST(ConfigGood, GoldenRunKeys) {
  // A change here changes every stored run's identity: update the keys only together with
  // kRunSpecVersion and a note in results/SCHEMA.md.
  const char* text = R"(
[sweep]
name = "golden"
seeds = 2
base_seed = 7
[train]
steps = 5
[[task]]
name = "golden-task"
seq_len = [16, 32]
[[model]]
name = "golden-model"
kind = ["a", "b"]
)";
  const ExpandedSweep ex = expand_sweep(parse_sweep(text, "golden.toml"));
  ASSERT_EQ(ex.runs.size(), 8u);
  EXPECT_EQ(ex.runs[0].spec.dump().substr(0, 60), R"({"base_seed":7,"device":"cpu","model":{"name":"golden-model")");
  EXPECT_EQ(ex.runs.front().key, "304bf835dcf3c1b42a6f2b99d9de6f3b869f11f409b090e98a77452a5c8aa076");
  EXPECT_EQ(ex.runs.back().key, "46f36afe297830e3827cdcf663c185bf8c9f5a46dc767b69a81acc9276072ba8");
}

TEST(ConfigGood, RanksPerRunIsPartOfTheRunOnlyAboveOne) {
  // A group sums its gradients in another order than one rank: another run. At 1 the spec
  // has no such key, so every single-rank run keeps its identity.
  const auto plain = expand_sweep(parse_sweep(kGood, "g.toml"));
  const auto one = expand_sweep(parse_sweep(with("base_seed = 7", "base_seed = 7\nranks_per_run = 1"), "g.toml"));
  const auto two = expand_sweep(parse_sweep(with("base_seed = 7", "base_seed = 7\nranks_per_run = 2"), "g.toml"));
  EXPECT_EQ(one.runs[0].key, plain.runs[0].key);
  EXPECT_FALSE(plain.runs[0].spec.contains("ranks_per_run"));
  EXPECT_NE(two.runs[0].key, plain.runs[0].key);
  EXPECT_EQ(two.runs[0].spec.at("ranks_per_run"), 2);
  EXPECT_EQ(two.runs[0].ranks_per_run(), 2);
  EXPECT_EQ(plain.runs[0].ranks_per_run(), 1);
}

TEST(ConfigGood, PrecisionIsPartOfTheRunOnlyAwayFromFp32) {
  // bf16 computes other numbers: another run. At fp32 (the default) the spec leaves the
  // option out, so every run stored before it existed keeps its key; readers see "fp32".
  const auto plain = expand_sweep(parse_sweep(kGood, "g.toml"));
  const auto fp32 = expand_sweep(parse_sweep(with("steps = 5", "steps = 5\nprecision = \"fp32\""), "g.toml"));
  const auto both = expand_sweep(parse_sweep(with("steps = 5", "steps = 5\nprecision = [\"fp32\", \"bf16\"]"), "g.toml"));
  EXPECT_EQ(fp32.runs[0].key, plain.runs[0].key);
  EXPECT_FALSE(plain.runs[0].spec.at("train").contains("precision"));
  EXPECT_EQ(plain.runs[0].train.precision, "fp32");
  EXPECT_EQ(value_at_path(plain.runs[0].spec, "train.precision"), "fp32");
  EXPECT_EQ(setting_values(plain.runs[0].spec).at("train.precision"), "fp32");
  ASSERT_EQ(both.runs.size(), 2 * plain.runs.size());
  std::size_t bf16 = 0;
  for (const auto& r : both.runs) {
    if (r.train.precision != "bf16") continue;
    ++bf16;
    EXPECT_EQ(r.spec.at("train").at("precision"), "bf16");
    for (const auto& p : plain.runs) EXPECT_NE(r.key, p.key);
  }
  EXPECT_EQ(bf16, plain.runs.size());
  // The report tells the two apart by the setting.
  std::vector<json> specs;
  for (const auto& r : both.runs) specs.push_back(r.spec);
  const auto varying = varying_paths(specs);
  EXPECT_NE(std::find(varying.begin(), varying.end(), "train.precision"), varying.end());
}

TEST(ConfigGood, SeedListAndBaseSeedChangeKeys) {
  std::string list = kGood;
  list.replace(list.find("seeds = 2"), 9, "seeds = [3, 5]");
  const ExpandedSweep ex = expand_sweep(parse_sweep(list, "l.toml"));
  ASSERT_EQ(ex.runs.size(), 8u);
  EXPECT_EQ(ex.runs[0].seed_index(), 3);
  EXPECT_EQ(ex.runs[1].seed_index(), 5);
  std::string base = kGood;
  base.replace(base.find("base_seed = 7"), 13, "base_seed = 8");
  EXPECT_NE(expand_sweep(parse_sweep(base, "b.toml")).runs[0].key, expand_sweep(parse_sweep(kGood, "g.toml")).runs[0].key);
}

TEST(ConfigGood, VaryingPathsDescribeTheSetting) {
  const ExpandedSweep ex = expand_sweep(parse_sweep(kGood, "good.toml"));
  std::vector<json> specs;
  for (const auto& r : ex.runs) specs.push_back(r.spec);
  const auto v = varying_paths(specs);
  ASSERT_GE(v.size(), 2u);
  EXPECT_EQ(v[0], "task.seq_len");
  EXPECT_NE(std::find(v.begin(), v.end(), "model.attention"), v.end());
  EXPECT_EQ(describe_run(ex.runs[2], v), "listops/64 transformer attention=linear seed 0");
}

// The sweep files that ship with the suite (workloads/sweeps/, claims/ and bench/) are read,
// checked and expanded as `lrbench validate` does: a renamed option or model breaks here.
TEST(ShippedSweeps, EveryFileParsesAndExpands) {
  std::size_t files = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(std::filesystem::path(LRB_SOURCE_DIR) / "workloads" / "sweeps")) {
    if (e.path().extension() != ".toml") continue;
    ++files;
    try {
      const ExpandedSweep ex = expand_sweep(load_sweep_file(e.path()));
      EXPECT_FALSE(ex.runs.empty()) << e.path();
    } catch (const std::exception& err) {
      ADD_FAILURE() << e.path() << ": " << err.what();
    }
  }
  EXPECT_GE(files, 10u);
}

}  // namespace
}  // namespace lrb
