// Evaluation variants: [[variant]] and [evaluate] in a sweep file, claims that select a
// variant, and the runner evaluating one run's trained weights under each variant.
#include <gtest/gtest.h>

#include "suite/config/expand.h"
#include "suite/config/sweep_spec.h"
#include "suite/run/runner.h"
#include "suite/runtime/counting_allocator.h"

namespace lrb {
namespace {

const std::string kBase = R"([sweep]
name = "v"
seeds = 2
threads = 1
[train]
steps = 4
batch_size = 4
eval_size = 12
[[task]]
name = "wingbeat"
seq_len = 64
train_size = 16
[[model]]
name = "sret"
widths = [8, 16, 32]
heads = [1, 2, 2]
groups1 = [2, 1, 1]
)";

const std::string kVariants = R"(
[evaluate]
batch_sizes = [1, 4]
repeats = 3
warmup = 1
[[variant]]
name = "full"
model = "sret"
[[variant]]
name = "rate-zero"
model = "sret"
merge = true
rho = 0.0
[[variant]]
name = "merge-dup"
model = "sret"
merge = true
[[variant]]
name = "merge-zero"
model = "sret"
merge = true
unmerge = "zero"
)";

std::string error_of(const std::string& text) {
  try {
    expand_sweep(parse_sweep(text, "v.toml"));
  } catch (const UserError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Variants, DeclaredVariantsJoinTheRunSpecResolved) {
  const ExpandedSweep plain = expand_sweep(parse_sweep(kBase, "v.toml"));
  const ExpandedSweep ex = expand_sweep(parse_sweep(kBase + kVariants, "v.toml"));
  ASSERT_EQ(ex.runs.size(), 2u);
  EXPECT_FALSE(plain.runs[0].spec.contains("evaluate"));
  EXPECT_NE(plain.runs[0].key, ex.runs[0].key);  // the variants are part of the experiment
  const json& ev = ex.runs[0].spec.at("evaluate");
  EXPECT_EQ(ev["batch_sizes"], json({1, 4}));
  EXPECT_EQ(ev["repeats"], 3);
  ASSERT_EQ(ev["variants"].size(), 4u);
  EXPECT_EQ(ev["variants"][0]["name"], "full");
  EXPECT_EQ(ev["variants"][0]["settings"]["merge"], false);
  const json& dup = ev["variants"][2]["settings"];
  EXPECT_EQ(dup["rho"], 0.25);  // the stage schedule's default, resolved
  EXPECT_EQ(dup["r"], 0);
  EXPECT_EQ(dup["unmerge"], "duplicate");
  EXPECT_EQ(ev["variants"][3]["settings"]["unmerge"], "zero");
}

TEST(Variants, MistakesAreErrorsAtTheirPlace) {
  EXPECT_NE(error_of(kBase + "[[variant]]\nname = \"a\"\nmodel = \"sret\"\nunmerg = \"zero\"\n")
                .find("v.toml:21:1: unknown key 'unmerg' in [[variant]] 'a' (inference settings of 'sret'); did you mean 'unmerge'?"),
            std::string::npos)
      << error_of(kBase + "[[variant]]\nname = \"a\"\nmodel = \"sret\"\nunmerg = \"zero\"\n");
  EXPECT_NE(error_of(kBase + "[[variant]]\nname = \"a\"\nmodel = \"sret\"\nunmerge = \"copy\"\n").find("v.toml:21:11"), std::string::npos);
  EXPECT_NE(error_of(kBase + "[[variant]]\nname = \"a\"\nmodel = \"sret\"\nrho = [0.1, 0.2]\n").find("takes a single value"), std::string::npos);
  EXPECT_NE(error_of(kBase + "[[variant]]\nname = \"a\"\nmodel = \"sret\"\nmerge = true\nschedule = \"layer\"\nrho = 0.1\n")
                .find("v.toml:23:1: in [[variant]] 'a': rho is the stage schedule's fraction"),
            std::string::npos)
      << error_of(kBase + "[[variant]]\nname = \"a\"\nmodel = \"sret\"\nmerge = true\nschedule = \"layer\"\nrho = 0.1\n");
  // A merge count on a variant that merges nothing was accepted silently.
  EXPECT_NE(error_of(kBase + "[[variant]]\nname = \"a\"\nmodel = \"sret\"\nrho = 0.25\n")
                .find("v.toml:21:1: in [[variant]] 'a': rho sets how many tokens merge, but merge = false"),
            std::string::npos)
      << error_of(kBase + "[[variant]]\nname = \"a\"\nmodel = \"sret\"\nrho = 0.25\n");
  EXPECT_NE(error_of(kBase + "[[variant]]\nname = \"a\"\nmodel = \"sret\"\nmerge = false\nschedule = \"layer\"\nr = 4\n")
                .find("r sets how many tokens merge, but merge = false"),
            std::string::npos);
  EXPECT_NE(error_of(kBase + "[[variant]]\nname = \"a\"\nmodel = \"transformer\"\n").find("has no inference settings"), std::string::npos);
  EXPECT_NE(error_of(kBase + "[[variant]]\nname = \"a\"\nmodel = \"mvit2\"\n").find("has no inference settings"), std::string::npos);
  EXPECT_NE(error_of(kBase + "[[variant]]\nname = \"a.b\"\nmodel = \"sret\"\n").find("may use only letters"), std::string::npos);
  EXPECT_NE(error_of(kBase + "[[variant]]\nname = \"a\"\nmodel = \"sret\"\n[[variant]]\nname = \"a\"\nmodel = \"sret\"\n")
                .find("already declared"),
            std::string::npos);
  EXPECT_NE(error_of(kBase + "[evaluate]\nrepeats = 3\n").find("add [[variant]] tables"), std::string::npos);
  EXPECT_NE(error_of(kBase + "[evaluate]\nbatch_sizes = [2, 2]\n[[variant]]\nname = \"a\"\nmodel = \"sret\"\n").find("distinct"),
            std::string::npos);
  EXPECT_NE(error_of(kBase + "[measure]\n[[variant]]\nname = \"a\"\nmodel = \"sret\"\n").find("trains nothing"), std::string::npos);
}

TEST(Variants, ClaimsSelectVariantsOfTheSameRuns) {
  const std::string claims = R"(
[[claim]]
name = "dup-not-worse"
statement = "s"
source = "src"
kind = "not-worse"
metric = "accuracy"
margin = 0.01
a = { model = "sret", variant = "merge-zero" }
b = { model = "sret", variant = "merge-dup" }
[[claim]]
name = "memory"
statement = "s"
source = "src"
kind = "ratio"
metric = "infer_peak_bytes_b4"
at_most = 0.9
a = { model = "sret", variant = "merge-dup" }
b = { model = "sret", variant = "full" }
[[claim]]
name = "against-trained"
statement = "s"
source = "src"
kind = "not-worse"
metric = "accuracy"
margin = 0.02
a = { model = "sret", variant = "merge-dup" }
b = { model = "sret" }
)";
  const ExpandedSweep ex = expand_sweep(parse_sweep(kBase + kVariants + claims, "v.toml"));
  ASSERT_EQ(ex.claims.size(), 3u);
  EXPECT_EQ(ex.claims[0].a.variant, "merge-zero");
  EXPECT_EQ(ex.claims[0].a.metric_name(ex.claims[0].metric), "variant.merge-zero.eval_accuracy");
  EXPECT_EQ(ex.claims[1].b.metric_name(ex.claims[1].metric), "variant.full.infer_peak_bytes_b4");
  EXPECT_EQ(ex.claims[2].b.metric_name(ex.claims[2].metric), "eval_accuracy");
  EXPECT_EQ(ex.claims[0].a.expected_runs, 2u);
  EXPECT_EQ(ClaimSpec::from_json(ex.claims[0].to_json()).a.variant, "merge-zero");

  auto claim = [&](const std::string& a, const std::string& b, const std::string& metric = "accuracy") {
    return kBase + kVariants + "[[claim]]\nname = \"c\"\nstatement = \"s\"\nsource = \"src\"\nkind = \"better\"\nmetric = \"" + metric +
           "\"\na = " + a + "\nb = " + b + "\n";
  };
  EXPECT_NE(error_of(claim("{ model = \"sret\", variant = \"merge-dupe\" }", "{ model = \"sret\" }"))
                .find("names variant 'merge-dupe', but no [[variant]] of that name evaluates its runs (their variants: full, merge-dup, merge-zero, rate-zero)"),
            std::string::npos)
      << error_of(claim("{ model = \"sret\", variant = \"merge-dupe\" }", "{ model = \"sret\" }"));
  EXPECT_NE(error_of(claim("{ model = \"sret\", variant = \"full\" }", "{ model = \"sret\", variant = \"full\" }")).find("select the same cell"),
            std::string::npos);
  EXPECT_NE(error_of(claim("{ model = \"sret\", variant = \"full\" }", "{ model = \"sret\" }", "infer_peak_bytes_b4"))
                .find("'b' a variant"),
            std::string::npos);
  EXPECT_NE(error_of(claim("{ model = \"sret\", variant = \"full\" }", "{ model = \"sret\", variant = \"merge-dup\" }", "infer_peak_bytes_b16"))
                .find("batch sizes of [evaluate] ([1,4])"),
            std::string::npos);
  EXPECT_NE(error_of(claim("{ model = \"sret\", variant = \"full\" }", "{ model = \"sret\", variant = \"merge-dup\" }", "peak_step_bytes"))
                .find("not 'peak_step_bytes'"),
            std::string::npos);
}

TEST(Variants, OneRunsWeightsEvaluatedUnderEachVariant) {
  CpuMemoryCounter::install();
  const ExpandedSweep ex = expand_sweep(parse_sweep(kBase + kVariants, "v.toml"));
  RunContext ctx;
  ctx.publish = false;
  const RunOutcome out = execute_run(ex.runs[0], ctx);
  ASSERT_EQ(out.status, RunStatus::Ok) << out.error;
  const auto& m = out.record.metrics;
  const auto& c = out.record.curves;
  // The variant with the default settings, and merging at rate 0, are the trained model itself:
  // the same weights give the same numbers, bit for bit.
  for (const char* v : {"full", "rate-zero"}) {
    const std::string p = std::string("variant.") + v + ".";
    EXPECT_EQ(m.at(p + "eval_loss"), m.at("eval_loss")) << v;
    EXPECT_EQ(m.at(p + "eval_accuracy"), m.at("eval_accuracy")) << v;
    for (const char* probe : {"pool1", "pool2", "head"}) {
      EXPECT_NEAR(m.at(p + "probe_" + probe + "_cosine"), 1.0, 1e-12) << v << " " << probe;
      EXPECT_EQ(m.at(p + "probe_" + probe + "_mean_shift"), 0.0);
      EXPECT_EQ(m.at(p + "probe_" + probe + "_var_ratio"), 1.0);
    }
  }
  // Merging changes the computation of those weights, and its pooling inputs.
  EXPECT_NE(m.at("variant.merge-dup.eval_loss"), m.at("eval_loss"));
  EXPECT_LT(m.at("variant.merge-dup.probe_pool1_cosine"), 1.0);
  EXPECT_LT(m.at("variant.merge-zero.probe_pool1_cosine"), m.at("variant.merge-dup.probe_pool1_cosine"));
  // Signal 64 -> 32 tokens after the stem: rho 0.25 merges 8 (lcm(2, 2) = 2 divides 24).
  const json& stages = out.record.records.at("variants").at("merge-dup").at("model").at("stages");
  EXPECT_EQ(stages[0]["tokens"], 32);
  EXPECT_EQ(stages[0]["tokens_after_merging"], 24);
  // Inference cost at each batch size, with every repeat kept.
  for (const char* v : {"full", "merge-dup"})
    for (const char* b : {"_b1", "_b4"}) {
      const std::string p = std::string("variant.") + v + ".";
      EXPECT_GT(m.at(p + "infer_peak_bytes" + b), 0);
      EXPECT_GT(m.at(p + "infer_samples_per_s" + b), 0);
      EXPECT_EQ(c.at(p + "infer_seconds" + b).size(), 3u);
    }
  EXPECT_EQ(c.at("probe_pool1_channel_mean").size(), 8u);  // width of stage 1
  EXPECT_EQ(c.at("variant.merge-zero.probe_pool1_channel_var").size(), 8u);
}

}  // namespace
}  // namespace lrb
