#include "suite/nn/input_stem.h"

#include <ATen/ATen.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>

#include "suite/core/errors.h"

namespace lrb {

std::vector<OptionSpec> stem_option_specs(std::int64_t default_patch) {
  return {{"patch", OptionType::Int, json(default_patch),
           "signal/grid inputs: one token per patch of this many samples (per axis); conv kernel 2p-1, stride p", {}, 1, 64}};
}

StemConfig stem_config(const json& o, std::int64_t dim) {
  StemConfig c;
  c.dim = dim;
  c.patch = o.contains("patch") ? o.at("patch").get<std::int64_t>() : 1;
  return c;
}

namespace {
std::int64_t patched(std::int64_t n, std::int64_t p) { return (n + p - 1) / p; }
}  // namespace

std::vector<std::int64_t> stem_grid(const TaskInfo& t, const StemConfig& c) {
  switch (t.modality) {
    case Modality::Tokens: return {t.input_shape.at(0)};
    case Modality::Signal: return {patched(t.input_shape.at(0), c.patch)};
    case Modality::Grid: return {patched(t.input_shape.at(1), c.patch), patched(t.input_shape.at(2), c.patch)};
  }
  return {};
}

double stem_flops(const TaskInfo& t, const StemConfig& c) {
  const auto g = stem_grid(t, c);
  double n = 1;
  for (auto x : g) n *= static_cast<double>(x);
  const double k = static_cast<double>(2 * c.patch - 1);
  const double d = static_cast<double>(c.dim);
  switch (t.modality) {
    case Modality::Tokens: return 0;  // a lookup
    case Modality::Signal: return 2 * n * d * static_cast<double>(t.input_shape.at(1)) * k;
    case Modality::Grid: return 2 * n * d * static_cast<double>(t.input_shape.at(0)) * k * k;
  }
  return 0;
}

InputStemImpl::InputStemImpl(const TaskInfo& task, const StemConfig& config)
    : task_(task), config_(config), grid_(stem_grid(task, config)) {
  const std::int64_t k = 2 * config.patch - 1, s = config.patch, pad = config.patch - 1;
  switch (task.modality) {
    case Modality::Tokens:
      LRB_CHECK(task.vocab_size > 0, "token task without a vocabulary size");
      embed_ = register_module("embed", torch::nn::Embedding(task.vocab_size, config.dim));
      break;
    case Modality::Signal:
      conv1d_ = register_module("conv", torch::nn::Conv1d(torch::nn::Conv1dOptions(task.input_shape.at(1), config.dim, k)
                                                               .stride(s).padding(pad)));
      break;
    case Modality::Grid:
      conv2d_ = register_module("conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(task.input_shape.at(0), config.dim, k)
                                                               .stride(s).padding(pad)));
      break;
  }
  std::int64_t n = 1;
  for (auto x : grid_) n *= x;
  if (config.positions) pos_ = register_parameter("pos", at::randn({1, n, config.dim}) * 0.02);
}

StemOutput InputStemImpl::forward(const at::Tensor& input) {
  StemOutput out;
  out.grid = grid_;
  switch (task_.modality) {
    case Modality::Tokens:
      out.tokens = embed_->forward(input);
      if (task_.pad_token >= 0) out.keep = input.ne(task_.pad_token);
      break;
    case Modality::Signal:  // [B, N, C] -> [B, C, N] -> [B, D, N'] -> [B, N', D]
      out.tokens = conv1d_->forward(input.transpose(1, 2)).transpose(1, 2);
      break;
    case Modality::Grid:  // [B, C, H, W] -> [B, D, H', W'] -> [B, H'W', D]
      out.tokens = conv2d_->forward(input).flatten(2).transpose(1, 2);
      break;
  }
  if (pos_.defined()) out.tokens = out.tokens + pos_;
  return out;
}

ClassifierHeadImpl::ClassifierHeadImpl(std::int64_t dim, std::int64_t classes, bool cls_pooling, bool norm_first)
    : cls_(cls_pooling),
      norm_first_(norm_first),
      norm_(register_module("norm", LayerNorm(torch::nn::LayerNormOptions({dim})))),
      linear_(register_module("linear", torch::nn::Linear(dim, classes))) {}

at::Tensor ClassifierHeadImpl::forward(const at::Tensor& tokens, const at::Tensor& keep) {
  if (norm_first_) {
    const at::Tensor normed = norm_->forward(tokens);
    return linear_->forward(cls_ ? normed.select(1, 0) : masked_mean(normed, keep));
  }
  const at::Tensor pooled = cls_ ? tokens.select(1, 0) : masked_mean(tokens, keep);
  return linear_->forward(norm_->forward(pooled));
}

at::Tensor prepend_cls(const at::Tensor& x, const at::Tensor& cls, at::Tensor& keep) {
  if (keep.defined()) keep = at::cat({at::ones({keep.size(0), 1}, keep.options()), keep}, 1);
  return at::cat({cls.expand({x.size(0), 1, x.size(2)}), x}, 1);
}

at::Tensor masked_mean(const at::Tensor& x, const at::Tensor& keep) {
  if (!keep.defined()) return x.mean(1);
  const auto w = keep.to(x.scalar_type()).unsqueeze(-1);
  return (x * w).sum(1) / w.sum(1).clamp_min(1.0);
}

at::Tensor last_real_token(const at::Tensor& x, const at::Tensor& keep) {
  const std::int64_t B = x.size(0), N = x.size(1);
  const auto long_opts = x.options().dtype(at::kLong);
  // The largest real position: argmax of (position + 1) where kept, 0 elsewhere.
  const at::Tensor idx = keep.defined() ? (keep.to(long_opts) * at::arange(1, N + 1, long_opts)).argmax(1)
                                        : at::full({B}, N - 1, long_opts);
  return x.gather(1, idx.view({B, 1, 1}).expand({B, 1, x.size(2)}));
}

}  // namespace lrb
