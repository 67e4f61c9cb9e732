// ReportSharedGpu: runs that shared their GPU with other ranks' runs ([sweep] runs_per_gpu,
// provenance gpu.shared_by) are cells of their own beside runs that had a GPU alone, so no
// cell or comparison mixes their times.
#include <gtest/gtest.h>

#include "suite/report/analysis.h"
#include "tests/support/report_inputs.h"
#include "tests/support/report_runs.h"

namespace lrb {
namespace {

std::vector<RunRecord> runs_on_gpus() {
  std::vector<RunRecord> runs;
  for (const char* model : {"transformer", "linear"})
    for (const int shared_by : {1, 4})
      for (int s = 0; s < 3; ++s) {
        test::RunDraft d;
        d.model = model;
        d.seed = shared_by > 1 ? s + 3 : s;  // one run per key: the shared job ran seeds 3..5
        d.provenance = {{"gpu", {{"name", "NVIDIA H100"}}}};
        if (shared_by > 1) d.provenance["gpu"]["shared_by"] = shared_by;
        d.metrics = {{"eval_accuracy", 0.6 + 0.01 * s}, {"step_seconds_median", shared_by * 0.01}};
        runs.push_back(test::make_run(d));
      }
  return runs;
}

TEST(ReportSharedGpu, SharedRunsAreCellsOfTheirOwnAndComparedOnlyWithEachOther) {
  const std::vector<RunRecord> runs = runs_on_gpus();
  EXPECT_EQ(runs[0].gpu_shared_by(), 1);
  EXPECT_EQ(runs[3].gpu_shared_by(), 4);
  const Analysis a = analyse(test::input_of(runs), test::fast_options());
  ASSERT_EQ(a.cells.size(), 4u);
  for (const auto& c : a.cells) {
    ASSERT_TRUE(c.cell.condition.contains("gpu_shared_by")) << c.cell.condition.dump();
    EXPECT_EQ(c.cell.values.size(), 3u);
  }
  ASSERT_EQ(a.comparisons.size(), 2u);
  for (const auto& k : a.comparisons)
    EXPECT_EQ(a.cells[k.a].cell.condition, a.cells[k.b].cell.condition) << "a comparison mixes shared and exclusive runs";
  // Runs that all had their GPU alone name no such condition.
  std::vector<RunRecord> alone;
  for (auto& r : runs)
    if (r.gpu_shared_by() == 1) alone.push_back(r);
  const Analysis b = analyse(test::input_of(alone), test::fast_options());
  ASSERT_EQ(b.cells.size(), 2u);
  EXPECT_FALSE(b.cells[0].cell.condition.contains("gpu_shared_by"));
}

}  // namespace
}  // namespace lrb
