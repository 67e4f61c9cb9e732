#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "tests/support/attention_test_util.h"
#include "suite/core/errors.h"
#include "suite/nn/attention/block_sparse.h"
#include "suite/nn/attention/kernel_registry.h"
#include "suite/nn/attention/linear.h"
#include "suite/nn/attention/pooling.h"
#include "suite/nn/attention/sliding_window.h"

namespace lrb {
namespace {

using namespace lrb::test;

TEST(AttentionRegistry, ListsEveryKernelWithDocumentedOptions) {
  std::set<std::string> names;
  for (const auto& k : attention_kernels()) {
    names.insert(k.name);
    EXPECT_FALSE(k.summary.empty());
    for (const auto& o : k.schema.options) EXPECT_FALSE(o.help.empty()) << k.name << "." << o.name;
  }
  EXPECT_EQ(names, (std::set<std::string>{"softmax", "linear", "sliding_window", "block_sparse", "pooling",
                                          "proportional", "retention", "tala"}));
  EXPECT_THROW(find_attention_kernel("performer"), UserError);
}

// Each kernel registers itself in its own file (LRB_REGISTER_ATTENTION_KERNEL): all of them
// reach the binary (lrb_nn is linked as objects), listed in their fixed order.
TEST(AttentionRegistry, EveryKernelRegistersItselfInListingOrder) {
  std::vector<std::string> names;
  for (const auto& k : attention_kernels()) names.push_back(k.name);
  EXPECT_EQ(names, (std::vector<std::string>{"softmax", "linear", "sliding_window", "block_sparse", "pooling",
                                             "proportional", "retention", "tala"}));
  try {
    find_attention_kernel("performer");
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("known kernels: softmax, linear, sliding_window, block_sparse, pooling, "
                                         "proportional, retention, tala"),
              std::string::npos)
        << e.what();
  }
}

TEST(AttentionRegistry, ParsesCommandLineOptions) {
  const auto sw = find_attention_kernel("sliding_window");
  const json o = kernel_options(sw, {"window=16", "block=4"});
  EXPECT_EQ(o.at("window").get<int>(), 16);
  EXPECT_EQ(o.at("block").get<int>(), 4);
  EXPECT_DOUBLE_EQ(o.at("scale").get<double>(), 0.0);
  EXPECT_THROW(kernel_options(sw, {"windw=3"}), UserError);
  EXPECT_THROW(kernel_options(sw, {"window=abc"}), UserError);
  EXPECT_THROW(kernel_options(sw, {"window=-1"}), UserError);
  EXPECT_THROW(kernel_options(sw, {"window"}), UserError);
  const auto lin = find_attention_kernel("linear");
  EXPECT_EQ(kernel_options(lin, {"feature_map=relu"}).at("feature_map"), "relu");
  EXPECT_THROW(kernel_options(lin, {"feature_map=tanh"}), UserError);
  const auto pool = find_attention_kernel("pooling");
  EXPECT_EQ(kernel_options(pool, {"grid=[4,4]"}).at("grid"), json({4, 4}));
  EXPECT_EQ(kernel_options(pool, {"stride_kv=2,2", "rel_pos=false"}).at("stride_kv"), json({2, 2}));
}

TEST(AttentionRegistry, RunsEveryKernel) {
  at::manual_seed(60);
  const auto in = random_qkv(2, 2, 64, 8);
  AttentionTensors t{in.q.to(at::kFloat), in.k.to(at::kFloat), in.v.to(at::kFloat)};
  for (const auto& k : attention_kernels()) {
    AttentionTensors ti = t;
    if (k.name == "proportional") ti.sizes = at::ones({2, 64});
    ti.mask = length_mask({64, 50}, 64);
    if (k.name == "sliding_window") ti.global = at::tensor({0}, at::kLong);
    const AttentionRun r = k.run(kernel_options(k), ti);
    EXPECT_EQ(r.out.size(2), 64) << k.name;
    EXPECT_FALSE(r.out.isnan().any().item<bool>()) << k.name;
  }
}

TEST(AttentionRegistry, SameResultAsTheDirectCall) {
  at::manual_seed(61);
  const auto in = random_qkv(1, 2, 200, 8);
  AttentionTensors t{in.q, in.k, in.v};
  const auto bs = find_attention_kernel("block_sparse");
  const AttentionRun r = bs.run(kernel_options(bs, {"block=8", "random_blocks=2", "seed=5"}), t);
  BlockSparseOptions o;
  o.block = 8;
  o.random_blocks = 2;
  o.seed = 5;
  const auto direct = block_sparse_attention(in.q, in.k, in.v, o);
  EXPECT_TRUE(r.records.at("random_blocks").equal(direct.random_blocks));
  EXPECT_LT(rel_error(r.out, direct.out), 1e-15);
  EXPECT_EQ(r.score_elements, block_sparse_score_elements(1, 2, 200, o));
  EXPECT_FALSE(r.info.at("dense_fallback").get<bool>());
  // A kernel refuses tensors it cannot use.
  AttentionTensors bad = t;
  bad.sizes = at::ones({1, 200});
  EXPECT_THROW(bs.run(kernel_options(bs), bad), UserError);
}

TEST(AttentionRegistry, RunsEveryLinearReadingAndMaskedPooling) {
  // `lrbench attend` reaches what the models run: each tau reading of the linear kernel,
  // and pooling attention with a padding mask and an unpooled Q.
  at::manual_seed(62);
  const auto in = random_qkv(2, 2, 48, 8);
  const at::Tensor mask = length_mask({48, 30}, 48);
  AttentionTensors t{in.q, in.k, in.v, mask};
  const auto lin = find_attention_kernel("linear");
  for (const char* reading : {"row", "output", "row-input"}) {
    const json o = kernel_options(lin, {std::string("normalization=") + reading});
    LinearAttentionOptions lo;
    lo.normalization = parse_linear_normalization(reading);
    EXPECT_LT(rel_error(lin.run(o, t).out, linear_attention(in.q, in.k, in.v, lo, mask)), 1e-15) << reading;
  }
  const json fixed = kernel_options(lin, {"normalization=row-input", "tau=2.5"});
  LinearAttentionOptions lo;
  lo.normalization = LinearNormalization::RowInput;
  lo.tau = 2.5;
  EXPECT_LT(rel_error(lin.run(fixed, t).out, linear_attention(in.q, in.k, in.v, lo, mask)), 1e-15);
  EXPECT_THROW(lin.run(kernel_options(lin, {"normalization=row", "tau=2"}), t), UserError);
  EXPECT_THROW(kernel_options(lin, {"normalization=tau"}), UserError);

  const auto pool = find_attention_kernel("pooling");
  const AttentionRun r = pool.run(kernel_options(pool, {"kernel_q=1", "stride_kv=4", "seed=3"}), t);
  PoolingAttentionOptions po;
  po.heads = 2;
  po.head_dim = 8;
  po.grid = {48};
  po.kernel_q = {1};
  po.stride_kv = {4};
  po.seed = 3;
  PoolingAttention module(po);
  module.to(at::kDouble);
  EXPECT_LT(rel_error(r.out, module.forward(in.q, in.k, in.v, mask).out), 1e-15);
  EXPECT_EQ(r.out.size(2), 48);  // Q not pooled
}

}  // namespace
}  // namespace lrb
