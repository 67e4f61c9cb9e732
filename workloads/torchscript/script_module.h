#pragma once
// A TorchScript module saved from Python (torch.jit.save), read and checked against a task
// before any run: every problem is a UserError that names the file and says what to do.
// The contract the module meets is docs/python-models.md.
#include <torch/csrc/jit/api/module.h>

#include <string>

#include "suite/contracts/task_info.h"

namespace lrb {

struct ScriptFile {
  std::string path;
  std::string sha256;  // of the bytes the module was loaded from
  torch::jit::Module module;
};

// Reads the file and loads the module from the very bytes digested: a missing, damaged or
// non-TorchScript file, a device or FIFO, and one saved by a newer PyTorch than this
// LibTorch reads are UserErrors.
ScriptFile load_script_file(const std::string& path);

struct ScriptFit {
  bool takes_keep = false;         // forward(x, keep) rather than forward(x)
  bool has_reset = false;          // exports reset_parameters(seed: int)
  double flops_per_sample = 0;     // counted on the trial batch; NaN: nothing countable ran
};

// Checks forward's and reset_parameters' signatures (`same_init`: a module without
// reset_parameters is allowed); flops_per_sample is left 0.
ScriptFit script_signatures(const ScriptFile& file, bool same_init);
// The signatures, then forward tried on one batch of `task`'s inputs: its logits must be
// [batch, classes], floating point, and depend on a trainable parameter. Runs the module in
// training mode (buffers such as a batch norm's statistics change): give it a copy that
// will not be trained.
ScriptFit check_script_fits(ScriptFile& file, const TaskInfo& task, bool same_init);

// What forward(x, keep) receives as keep: [B, N] for tokens and signals, [B, H, W] for
// grids, true where the input is real (tokens: not the task's pad id).
at::Tensor keep_mask_of(const at::Tensor& x, const TaskInfo& task);

}  // namespace lrb
