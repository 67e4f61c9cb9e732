#pragma once
// The attention kernels by name, for `lrbench attend --kernel NAME --opt key=value` and
// `lrbench attend --list`: each entry has its options (typed, with defaults and help) and a
// function that runs it on q, k, v plus the optional tensors it reads.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "suite/contracts/options.h"

namespace lrb {

struct AttentionTensors {
  at::Tensor q, k, v;  // [B, H, N, d]
  at::Tensor mask;     // [B, Nk] bool, true = real token (optional)
  at::Tensor global;   // sliding_window: global positions, int64 [g] / [B, g] or bool [B, N]
  at::Tensor sizes;    // proportional: token sizes [B, Nk]
};

struct AttentionRun {
  at::Tensor out;                              // [B, H, Nq', d]
  std::int64_t score_elements = 0;             // query-key scores computed, whole batch
  std::map<std::string, at::Tensor> records;   // e.g. block_sparse's "random_blocks"
  json info = json::object();                  // e.g. {"dense_fallback": true}
};

struct AttentionKernel {
  std::string name;
  std::string summary;
  OptionSchema schema;
  std::vector<std::string> reads;  // optional tensors it uses: "mask", "global", "sizes"
  // `options`: a complete set (see kernel_options). Throws UserError on bad inputs.
  std::function<AttentionRun(const json& options, const AttentionTensors& in)> run;
};

// Every kernel, in listing order.
const std::vector<AttentionKernel>& attention_kernels();
// Throws UserError naming the known kernels when `name` is not one.
const AttentionKernel& find_attention_kernel(const std::string& name);
// The defaults overridden by "key=value" strings (command-line syntax: numbers, true/false,
// lists as 1,2 or [1,2]); unknown keys and bad values are UserErrors saying what to write.
json kernel_options(const AttentionKernel& kernel, const std::vector<std::string>& assignments = {});

}  // namespace lrb
