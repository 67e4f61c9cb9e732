// The figures the plugins' models measure are declared in their folders' figures.cpp
// (torch-free), so that a program without the models (lrbench-results, and the torch-free
// test program, which links lrb_plugin_figures the same way) knows their units and
// directions: a report of MAELRE's memory claims needs attention_peak_bytes lower-is-better.
#include <gtest/gtest.h>

#include "suite/contracts/figures.h"

namespace lrb {
namespace {

TEST(PluginFigures, TheModelsFiguresAreKnownWithoutTheModels) {
  const FigureDef* peak = find_figure("attention_peak_bytes");
  ASSERT_NE(peak, nullptr);
  EXPECT_EQ(peak->direction, Direction::Lower);
  EXPECT_EQ(peak->unit, FigureUnit::Bytes);
  EXPECT_TRUE(peak->exact_on_cpu);
  EXPECT_EQ(peak->recorded_by, "model maelre");
  const FigureDef* gap = find_figure("form_gap");
  ASSERT_NE(gap, nullptr);
  EXPECT_EQ(gap->direction, Direction::Lower);
  EXPECT_EQ(gap->recorded_by, "model mixformer");
  EXPECT_FALSE(peak->harness) << "a model's figure: the results index keeps its recorded definition";
}

}  // namespace
}  // namespace lrb
