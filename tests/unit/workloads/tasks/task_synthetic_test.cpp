// Each synthetic task is learnable but not trivial: a simple classifier on a fixed feature
// beats chance by a clear margin, and the best constant predictor does not.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "suite/contracts/metrics.h"
#include "tests/support/task_test_util.h"

namespace lrb {

using testing::constant_accuracy;
using testing::generate_task;
using testing::nearest_centroid_accuracy;

namespace {

// Log magnitude spectrum of [n, L, 1] signals, averaged into `bands` bands.
at::Tensor spectrum_feature(const at::Tensor& x, std::int64_t bands) {
  const auto mag = at::fft_rfft(x.squeeze(2), c10::nullopt, 1).abs();
  const auto usable = mag.size(1) / bands * bands;
  return at::log1p(mag.narrow(1, 0, usable).reshape({x.size(0), bands, -1}).mean(2));
}

}  // namespace

TEST(TaskWingbeat, LearnableNotTrivial) {
  const auto d = generate_task("wingbeat", {{"train_size", 240}}, 1024, 11, 120);
  ASSERT_EQ(d.train.x.sizes(), (at::IntArrayRef{240, 1024, 1}));
  // z-normalised like UCR series.
  EXPECT_NEAR(d.train.x[0].mean().item<double>(), 0.0, 1e-4);
  EXPECT_NEAR(d.train.x[0].std(false).item<double>(), 1.0, 1e-3);
  const double nc = nearest_centroid_accuracy(spectrum_feature(d.train.x, 128), d.train.y,
                                              spectrum_feature(d.eval.x, 128), d.eval.y, 6);
  const double constant = constant_accuracy(d.train.y, d.eval.y, 6);
  std::printf("wingbeat nearest centroid: %.3f\n", nc);
  EXPECT_GT(nc, 0.6) << "chance is 1/6";
  EXPECT_LT(constant, 0.3);
  // Long series work too.
  const auto longer = generate_task("wingbeat", {{"train_size", 2}}, 32768, 11, 1);
  EXPECT_EQ(longer.train.x.size(1), 32768);
  EXPECT_TRUE(at::isfinite(longer.train.x).all().item<bool>());
}

TEST(TaskAudio, LearnableNotTrivial) {
  const json small = {{"train_size", 240}, {"sample_rate", 8000.0}, {"duration", 0.512}, {"n_fft", 128}, {"hop", 64}};
  const auto info = testing::describe_task("audio", small, 0);
  EXPECT_EQ(info.modality, Modality::Grid);
  EXPECT_EQ(info.input_shape, (std::vector<std::int64_t>{1, 64, 64}));
  EXPECT_EQ(testing::describe_task("audio", json::object(), 0).input_shape, (std::vector<std::int64_t>{1, 128, 128}));
  const auto d = generate_task("audio", small, 0, 3, 120);
  ASSERT_EQ(d.train.x.sizes(), (at::IntArrayRef{240, 1, 64, 64}));
  EXPECT_TRUE(at::isfinite(d.train.x).all().item<bool>());
  // Per frequency bin: mean and spread over time; the trajectory of the spectral
  // centroid (its slope over time and how much it jumps between frames); the spread of
  // frame energy. Standardised with the training set's statistics.
  auto feature = [](const at::Tensor& x) {
    const auto s = x.squeeze(1).to(at::kDouble);          // [n, F, T]
    const auto p = s.exp();
    const auto bins = at::arange(s.size(1), at::kDouble).view({1, -1, 1});
    const auto centroid = (p * bins).sum(1) / p.sum(1);   // [n, T]
    const auto t = at::arange(s.size(2), at::kDouble) - (s.size(2) - 1) / 2.0;
    const auto slope = (centroid * t).sum(1, true) / t.pow(2).sum();
    const auto jumps = centroid.diff(1, 1).abs().mean(1, true);
    const auto energy = p.sum(1).log();
    return at::cat({s.mean(2), s.std(2), slope, jumps, energy.std(1, true, true)}, 1);
  };
  auto ft = feature(d.train.x), fe = feature(d.eval.x);
  const auto mu = ft.mean(0, true), sd = ft.std(0, true, true).clamp_min(1e-6);
  const double nc = nearest_centroid_accuracy((ft - mu) / sd, d.train.y, (fe - mu) / sd, d.eval.y, 8);
  std::printf("audio nearest centroid: %.3f\n", nc);
  EXPECT_GT(nc, 0.45) << "chance is 1/8";
  EXPECT_LT(constant_accuracy(d.train.y, d.eval.y, 8), 0.25);
}

TEST(TaskRetrieval, AnswerIsFarAndOnlyFoundByLookup) {
  const std::int64_t L = 128;
  const auto o = testing::task_options("retrieval", json::object(), L);
  const auto lo = o["min_distance"].get<std::int64_t>(), hi = o["max_distance"].get<std::int64_t>();
  EXPECT_EQ(lo, 64);
  const auto d = generate_task("retrieval", {{"train_size", 400}}, L, 8, 200);
  const std::int64_t first_value = 2 + o["num_keys"].get<std::int64_t>();
  auto lookup = [&](const Split& s) {
    // The oracle feature: the value token right after the query key's occurrence.
    auto pred = at::empty({s.size()}, at::kLong);
    const auto x = s.x.contiguous();
    for (std::int64_t i = 0; i < s.size(); ++i) {
      const auto* row = x.data_ptr<std::int64_t>() + i * L;
      std::int64_t q = L - 1;
      while (row[q] == 0) --q;  // the query key is the last non-pad token
      EXPECT_EQ(row[q - 1], 1) << "query marker before the query key";
      int found = 0;
      for (std::int64_t t = 0; t + 1 < q - 1; t += 2)
        if (row[t] == row[q]) {
          ++found;
          pred[i] = row[t + 1] - first_value;
          EXPECT_GE(q - (t + 1), lo);
          EXPECT_LE(q - (t + 1), hi);
        }
      EXPECT_EQ(found, 1) << "the query key occurs once among the pairs";
    }
    return pred;
  };
  EXPECT_TRUE(at::equal(lookup(d.eval), d.eval.y));
  // Counting tokens does not find the answer: bag-of-values nearest centroid stays near
  // chance (0.1), as does the best constant.
  auto bag = [&](const Split& s) {
    auto v = s.x.narrow(1, 0, L - 2).sub(first_value);
    auto f = at::zeros({s.size(), 10}, at::kDouble);
    for (std::int64_t c = 0; c < 10; ++c) f.select(1, c).copy_(v.eq(c).sum(1));
    return f;
  };
  EXPECT_LT(nearest_centroid_accuracy(bag(d.train), d.train.y, bag(d.eval), d.eval.y, 10), 0.25);
  EXPECT_LT(constant_accuracy(d.train.y, d.eval.y, 10), 0.25);
  // Placement options.
  const auto near = testing::task_options("retrieval", {{"min_distance", 2}, {"max_distance", 10}}, L);
  EXPECT_EQ(near["max_distance"], 10);
  EXPECT_THROW(testing::task_options("retrieval", {{"min_distance", 20}, {"max_distance", 10}}, L), OptionError);
  EXPECT_THROW(testing::task_options("retrieval", {{"max_distance", 1000}}, L), OptionError);
}

TEST(TaskMultilabelDocs, LearnableNotTrivial) {
  const std::int64_t L = 256, K = 32;
  const auto info = testing::describe_task("multilabel-docs", json::object(), L);
  EXPECT_TRUE(info.multilabel);
  EXPECT_EQ(info.num_classes, K);
  const auto d = generate_task("multilabel-docs", {{"train_size", 400}}, L, 4, 200);
  ASSERT_EQ(d.train.y.sizes(), (at::IntArrayRef{400, K}));
  EXPECT_EQ(d.train.y.scalar_type(), at::kFloat);
  const auto per_doc = d.train.y.sum(1);
  EXPECT_GE(per_doc.min().item<float>(), 1.0f);
  EXPECT_LE(per_doc.max().item<float>(), 5.0f);
  EXPECT_GT(per_doc.mean().item<float>(), 2.0f) << "several labels per document";
  // Per label: nearest of two centroids (documents with / without it) on normalised
  // bags of words.
  const auto V = info.vocab_size;
  auto bow = [&](const at::Tensor& x) {
    auto f = at::zeros({x.size(0), V}, at::kDouble);
    f.scatter_add_(1, x, at::ones(x.sizes(), at::kDouble));
    f.select(1, 0).zero_();
    return f / f.sum(1, true);
  };
  const auto ft = bow(d.train.x), fe = bow(d.eval.x);
  auto logits = at::zeros({fe.size(0), K}, at::kFloat);
  for (std::int64_t k = 0; k < K; ++k) {
    const auto has = d.train.y.select(1, k).gt(0.5);
    const auto pos = ft.index({has}).mean(0), neg = ft.index({has.logical_not()}).mean(0);
    logits.select(1, k).copy_((fe - neg).pow(2).sum(1) - (fe - pos).pow(2).sum(1));
  }
  const double ebf = compute_metric("ebf", logits, d.eval.y);
  std::printf("multilabel-docs two-centroid: ebf %.3f micro-F1 %.3f\n", ebf, compute_metric("micro_f1", logits, d.eval.y));
  EXPECT_GT(ebf, 0.6);
  EXPECT_GT(compute_metric("micro_f1", logits, d.eval.y), 0.6);
  // Constant predictors: nothing (ebf 0), or the most frequent label for every document.
  EXPECT_EQ(compute_metric("ebf", at::full({fe.size(0), K}, -1.0f), d.eval.y), 0.0);
  auto top = at::full({fe.size(0), K}, -1.0f);
  top.select(1, d.train.y.sum(0).argmax().item<std::int64_t>()).fill_(1.0f);
  EXPECT_LT(compute_metric("ebf", top, d.eval.y), 0.3);
}

}  // namespace lrb
