// Typed [train] and [measure]: the schema and the struct are one table, and a run's settings
// are its spec's JSON read once.
#include <gtest/gtest.h>

#include <string>

#include "suite/config/expand.h"
#include "suite/config/sweep_spec.h"
#include "suite/config/train_settings.h"

namespace lrb {
namespace {

// A sweep of one small ListOps task and one transformer, with `settings` (a [train] or
// [measure] table) between its [sweep] table and them.
SweepSpec sweep_with(const std::string& settings) {
  return parse_sweep("[sweep]\nname = \"t\"\nseeds = 1\n" + settings +
                         "\n[[task]]\nname = \"listops\"\nseq_len = 64\ntrain_size = 16\n"
                         "[[model]]\nname = \"transformer\"\ndim = 32\n",
                     "t.toml");
}

TEST(TrainSettings, EveryOptionOfTheSchemaIsAFieldAndBack) {
  const json defaults = train_schema().defaults(json::object());
  EXPECT_EQ(TrainSettings::from_json(defaults).to_json(), defaults);
  EXPECT_EQ(TrainSettings::from_json(defaults).to_json().size(), train_schema().options.size());
  const json measure = measure_schema().defaults(json::object());
  EXPECT_EQ(MeasureSettings::from_json(measure).to_json(), measure);
}

TEST(TrainSettings, ARunReadsWhatItsSpecSays) {
  const SweepSpec spec = sweep_with(R"(
[train]
steps = 7
batch_size = [3, 5]
optimizer = "sgd"
lr = 0.25
memory_budget = "1KiB")");
  const ExpandedSweep ex = expand_sweep(spec);
  ASSERT_EQ(ex.runs.size(), 2u);
  for (const auto& run : ex.runs) {
    EXPECT_EQ(run.train.steps, 7);
    EXPECT_EQ(run.train.optimizer, "sgd");
    EXPECT_DOUBLE_EQ(run.train.lr, 0.25);
    EXPECT_EQ(run.train.memory_budget, 1024);
    EXPECT_EQ(run.train.schedule, "cosine");  // a default
    // The spec holds every option but those left out at their default (precision = "fp32").
    EXPECT_EQ(train_identity(run.train.to_json()), run.spec.at("train"));
    EXPECT_EQ(run.train.precision, "fp32");
    EXPECT_FALSE(run.measure.has_value());
  }
  EXPECT_EQ(ex.runs[0].train.batch_size + ex.runs[1].train.batch_size, 8);
}

TEST(TrainSettings, AMeasurementRunCarriesItsMeasureSettings) {
  const SweepSpec spec = sweep_with(R"(
[measure]
budget = "64MiB"
steps = 2)");
  ASSERT_TRUE(spec.measure.has_value());
  EXPECT_EQ(spec.measure->budget, 64 << 20);
  EXPECT_EQ(spec.measure->max_batch, 65536);
  const ExpandedSweep ex = expand_sweep(spec);
  ASSERT_TRUE(ex.runs.at(0).measure.has_value());
  EXPECT_EQ(ex.runs[0].measure->steps, 2);
  EXPECT_EQ(ex.runs[0].measure->to_json(), ex.runs[0].spec.at("measure"));
}

}  // namespace
}  // namespace lrb
