#pragma once
// The Task contract: deterministic train/eval splits for a seed and a sequence length.
// Registration (name, options, describe) lives in suite/registry/registry.h.
#include <ATen/core/Tensor.h>

#include <cstdint>

#include "suite/contracts/task_info.h"

namespace lrb {

struct Split {
  at::Tensor x;  // tokens [n, N] int64; signal [n, N, C] float; grid [n, C, H, W] float
  at::Tensor y;  // [n] int64 labels, or [n, K] float 0/1 for multi-label
  std::int64_t size() const { return x.size(0); }
};

struct TaskData {
  Split train;
  Split eval;
};

struct DataRequest {
  std::uint64_t seed = 0;          // derive_seed(base, seed index, kStreamData)
  std::int64_t eval_size = 512;    // evaluation samples wanted ([train] eval_size)
};

class Task {
 public:
  virtual ~Task() = default;
  // The same request gives the same bytes on any machine.
  virtual TaskData generate(const DataRequest& request) const = 0;
};

}  // namespace lrb
