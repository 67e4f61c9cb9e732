#pragma once
// The attention kernels by name, for `lrbench attend --kernel NAME --opt key=value` and
// `lrbench attend --list`: each entry has its options (typed, with defaults and help) and a
// function that runs it on q, k, v plus the optional tensors it reads.
//
// Adding a kernel is one registration line in the kernel's own file, as for models and
// tasks (suite/registry/registry.h):
//
//   LRB_REGISTER_ATTENTION_KERNEL(80, tala_kernel());
//
// The number is the kernel's place in the listing (`lrbench attend --list`, the known
// kernels of an error message): ascending, one per kernel. suite/nn/ is compiled as
// objects into every program that links it (lrb_nn, cmake/layers.cmake), so the linker
// never drops a registration.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "suite/contracts/options.h"
#include "suite/core/macros.h"

namespace lrb {

struct AttentionTensors {
  at::Tensor q, k, v;  // [B, H, N, d]
  at::Tensor mask;     // [B, Nk] bool, true = real token (optional)
  at::Tensor global;   // sliding_window: global positions, int64 [g] / [B, g] or bool [B, N]
  at::Tensor sizes;    // proportional: token sizes [B, Nk]
  at::Tensor decays;   // tala: the decay ω of each head, float64 [H] (optional: retention's)
  at::Tensor bias;     // tala: G, [H, w+1] (relative) or [H, T, T] (pairwise) (optional: drawn from seed)
};

struct AttentionRun {
  at::Tensor out;                              // [B, H, Nq', d]
  std::int64_t score_elements = 0;             // query-key scores computed, whole batch
  std::map<std::string, at::Tensor> records;   // e.g. block_sparse's "random_blocks"
  std::map<std::string, at::Tensor> values;    // float64, e.g. tala's "decays" and "bias" as used
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

// Adds a kernel at static initialisation (LRB_REGISTER_ATTENTION_KERNEL); a second kernel
// with the same name or the same `order` is a bug (LRB_CHECK).
bool register_attention_kernel(int order, AttentionKernel kernel);

// Every registered kernel, in listing order.
const std::vector<AttentionKernel>& attention_kernels();
// Throws UserError naming the known kernels when `name` is not one.
const AttentionKernel& find_attention_kernel(const std::string& name);
// The defaults overridden by "key=value" strings (command-line syntax: numbers, true/false,
// lists as 1,2 or [1,2]); unknown keys and bad values are UserErrors saying what to write.
json kernel_options(const AttentionKernel& kernel, const std::vector<std::string>& assignments = {});

// What the kernels' files describe themselves with: typed options (min: the smallest
// value, none when unset) and the check of the optional tensors a kernel does not read.
namespace kernel_spec {
OptionSpec int_opt(std::string name, std::int64_t def, std::string help, std::optional<double> min = 0);
OptionSpec float_opt(std::string name, double def, std::string help, std::optional<double> min = 0);
OptionSpec bool_opt(std::string name, bool def, std::string help);
OptionSpec string_opt(std::string name, std::string def, std::vector<std::string> choices, std::string help);
OptionSpec int_list_opt(std::string name, std::vector<std::int64_t> def, std::string help);
OptionSpec scale_opt();  // "scale": the logit scale; 0 means 1/sqrt(d)
std::vector<std::int64_t> int_list(const json& j);
// UserError naming the kernel when `in` holds a tensor it does not read.
void reject(const AttentionTensors& in, const std::string& kernel, bool mask, bool global, bool sizes);
}  // namespace kernel_spec

}  // namespace lrb

#define LRB_REGISTER_ATTENTION_KERNEL(order, kernel)                        \
  static const bool LRB_CONCAT(lrb_attention_kernel_registered_, __LINE__) = \
      ::lrb::register_attention_kernel(order, kernel)
