#pragma once
// Small sweep files shared by the end-to-end tests.
#include <string>

namespace lrb::test {

// 2 seeds x 2 attention kinds of a tiny Transformer on short ListOps: a few seconds.
inline std::string tiny_sweep(int steps = 30, const std::string& extra_sweep = "", const std::string& extra_train = "") {
  return R"([sweep]
name = "tiny"
seeds = 2
base_seed = 3
threads = 1
)" + extra_sweep + R"(
[train]
steps = )" + std::to_string(steps) + R"(
batch_size = 8
eval_every = 10
eval_size = 64
)" + extra_train + R"(
[[task]]
name = "listops"
seq_len = 48
train_size = 128

[[model]]
name = "transformer"
dim = 16
depth = 1
heads = 2
attention = ["softmax", "linear"]
)";
}

}  // namespace lrb::test
