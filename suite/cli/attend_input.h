#pragma once
// The input of `lrbench attend`: q, k, v and the optional tensors a kernel reads, from the
// user's HDF5 file, each checked for kind and shape (suite/cli/h5_tensors.h). Any bytes may
// arrive here; the answer is the tensors or a UserError naming the file and the dataset
// (tests/fuzz/attend_input_fuzz.cpp feeds it noise).
#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

#include "suite/nn/attention/kernel_registry.h"

namespace lrb {

struct AttendInput {
  AttentionTensors tensors;
  std::vector<std::string> ignored;  // optional datasets in the file that the kernel does not read
};

// `kernel_reads`: the optional inputs the kernel reads ("mask", "global", "sizes").
AttendInput read_attend_input(const std::string& in, const std::vector<std::string>& kernel_reads);

}  // namespace lrb
