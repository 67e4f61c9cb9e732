#pragma once
// Input stems shared by every model: token ids (embedding + learned positions), a 1-D signal
// (strided conv patches + learned positions) or a 2-D grid (conv patch stem, MViT-style:
// kernel 2p-1, stride p, padding p-1, then learned positions). Only the stem depends on the
// modality; what follows sees [B, N, D] tokens. A model with its own positional scheme
// (MViT v2's relative positions) can leave the learned positions out.
#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/options/normalization.h>

#include <vector>

#include "suite/contracts/options.h"
#include "suite/contracts/task_info.h"
#include "suite/nn/cpu/layer_norm.h"

namespace lrb {

struct StemConfig {
  std::int64_t dim = 64;
  std::int64_t patch = 1;  // signal/grid: tokens are patches of p samples (per axis)
  bool positions = true;   // add learned absolute positions
};

struct StemOutput {
  at::Tensor tokens;               // [B, N, D]
  at::Tensor keep;                 // [B, N] bool, true = real token; undefined when no padding
  std::vector<std::int64_t> grid;  // token grid: {N} or {H, W}
};

// The stem options every model offers (appended to its schema): "patch".
std::vector<OptionSpec> stem_option_specs(std::int64_t default_patch);
StemConfig stem_config(const json& options, std::int64_t dim);
// Token grid after the stem, and the stem's forward FLOPs per sample.
std::vector<std::int64_t> stem_grid(const TaskInfo& task, const StemConfig& config);
double stem_flops(const TaskInfo& task, const StemConfig& config);

class InputStemImpl : public torch::nn::Module {
 public:
  InputStemImpl(const TaskInfo& task, const StemConfig& config);
  StemOutput forward(const at::Tensor& input);
  const std::vector<std::int64_t>& grid() const { return grid_; }

 private:
  TaskInfo task_;
  StemConfig config_;
  std::vector<std::int64_t> grid_;
  torch::nn::Embedding embed_{nullptr};
  torch::nn::Conv1d conv1d_{nullptr};
  torch::nn::Conv2d conv2d_{nullptr};
  at::Tensor pos_;
};
TORCH_MODULE(InputStem);

// Mean pooling over real tokens (or the first token for "cls"), LayerNorm, Linear. With
// norm_first, the LayerNorm runs on every token before the pooling (MViT's order: normalise,
// then average); for "cls" pooling both orders are the same.
class ClassifierHeadImpl : public torch::nn::Module {
 public:
  ClassifierHeadImpl(std::int64_t dim, std::int64_t classes, bool cls_pooling, bool norm_first = false);
  at::Tensor forward(const at::Tensor& tokens, const at::Tensor& keep);

 private:
  bool cls_, norm_first_;
  LayerNorm norm_{nullptr};
  torch::nn::Linear linear_{nullptr};
};
TORCH_MODULE(ClassifierHead);

// Prepends a learned CLS token (cls [1, 1, D]) to x [B, N, D], and a real-token entry to
// `keep` when there is one.
at::Tensor prepend_cls(const at::Tensor& x, const at::Tensor& cls, at::Tensor& keep);

// Mean over real tokens: x [B, N, D], keep [B, N] bool or undefined.
at::Tensor masked_mean(const at::Tensor& x, const at::Tensor& keep);

// The last real token of x [B, N, D] as [B, 1, D] (for causal layers, the only token that has
// read the whole sequence); keep [B, N] bool or undefined (then token N-1).
at::Tensor last_real_token(const at::Tensor& x, const at::Tensor& keep);

}  // namespace lrb
