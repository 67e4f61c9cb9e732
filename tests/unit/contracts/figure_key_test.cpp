// FigureKey: the one parse and format of stored figure names (suite/contracts/figure_key.h).
#include <gtest/gtest.h>

#include "suite/contracts/figure_key.h"
#include "suite/core/seeds.h"

namespace lrb {
namespace {

TEST(FigureKey, EachFormTakesItsParts) {
  const FigureKey m = FigureKey::parse("eval_accuracy");
  EXPECT_EQ(m.kind, FigureKey::Kind::TaskMetric);
  EXPECT_EQ(m.name, "accuracy");
  EXPECT_EQ(m.display(), "accuracy");
  const FigureKey v = FigureKey::parse("variant.fast.eval_accuracy");
  EXPECT_EQ(v.variant, "fast");
  EXPECT_EQ(v.kind, FigureKey::Kind::TaskMetric);
  EXPECT_EQ(v.display(), "variant.fast.eval_accuracy");
  const FigureKey i = FigureKey::parse("variant.merge-0.5.infer_peak_bytes_b16");
  EXPECT_EQ(i.variant, "merge-0");  // a variant's name holds no '.' (variant_spec.cpp)
  const FigureKey b = FigureKey::parse("variant.m.infer_samples_per_s_b128");
  EXPECT_EQ(b.kind, FigureKey::Kind::Inference);
  EXPECT_EQ(b.name, "samples_per_s");
  EXPECT_EQ(b.batch, 128);
  const FigureKey p = FigureKey::parse("variant.m.probe_block_2_mean_shift");
  EXPECT_EQ(p.kind, FigureKey::Kind::Probe);
  EXPECT_EQ(p.probe, "block_2");
  EXPECT_EQ(p.statistic, "mean_shift");
  EXPECT_EQ(FigureKey::parse("peak_bytes").kind, FigureKey::Kind::Plain);
  // Not a form: plain names, as written.
  for (const char* plain : {"probe_batch", "probe_fits", "infer_peak_bytes_b", "infer_peak_bytes_b08", "infer_other_b8", "probe__cosine",
                            "variant.x", "train_loss"})
    EXPECT_EQ(FigureKey::parse(plain).kind, FigureKey::Kind::Plain) << plain;
  EXPECT_EQ(FigureKey::inference("peak_bytes", 8, "").stored(), "infer_peak_bytes_b8");
  EXPECT_EQ(FigureKey::probe_statistic("pool1", "cosine", "v").stored(), "variant.v.probe_pool1_cosine");
  EXPECT_EQ(FigureKey::task_metric("loss", "v").stored(), "variant.v.eval_loss");
  EXPECT_TRUE(spelled_as_variant_figure("infer_anything"));
  EXPECT_FALSE(spelled_as_variant_figure("eval_accuracy"));
}

// Every string reads back to itself: parse then stored is the identity, on names built of the
// grammar's pieces at random.
TEST(FigureKey, EveryNameReadsBackToItself) {
  const char* pieces[] = {"variant.", "v", ".", "eval_", "infer_", "peak_bytes", "seconds", "_b", "0", "12", "probe_", "p",
                          "_",        "cosine", "mean_shift", "channel_var", "x", "..", "b"};
  Rng rng(5);
  for (int n = 0; n < 20000; ++n) {
    std::string s;
    const auto parts = rng.below(7);
    for (std::uint64_t k = 0; k < parts; ++k) s += pieces[rng.below(std::size(pieces))];
    EXPECT_EQ(FigureKey::parse(s).stored(), s) << s;
  }
}

}  // namespace
}  // namespace lrb
