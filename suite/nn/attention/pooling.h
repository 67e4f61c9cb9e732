#pragma once
// Pooling attention (MViT v1, arXiv 2104.11227; MViT v2, arXiv 2112.01526) on 1-D and 2-D
// token grids: q, k, v are each pooled (depthwise conv + LayerNorm, max or avg) with their
// own strides; the output follows the pooled q. v2 additions (both on by default):
//  - decomposed relative position: logits += q.R^h[h(i),h(j)] + q.R^w[w(i),w(j)] with
//    unscaled q, one table of 2*max(q_size, kv_size)-1 rows per axis;
//  - residual pooling: output + pooled q.
// Holds parameters (conv kernels, norms, tables), hence a torch::nn::Module. Dense over the
// pooled tokens: O(Nq*Nkv) memory, which is the point of striding k and v.
//
// Padding (a key mask, true = real token; MViT itself never pads, so the rule is ours):
// padding acts as the grid's border. Before pooling, padded positions are zeroed (conv, avg:
// as the zero border) or left out (max: as max pooling's border); a pooled position is real
// when the position its window is centred on is real. Pooled keys that are not real are
// excluded from every softmax, and pooled positions that are not real are zero before the
// pooling's LayerNorm. For a sequence padded at its end this is exactly the computation on
// the sequence without its padding, and nothing a padded position holds reaches a real
// query. (Counting a window as real when any of its tokens is would add a pooled token
// centred on padding after the last real token at every pooling, so a padded sequence would
// differ from the same sequence unpadded.)
#include <torch/nn/module.h>

#include <cstdint>
#include <string>
#include <vector>

namespace lrb {

enum class PoolMode { Conv, Max, Avg };
PoolMode parse_pool_mode(const std::string& name);  // conv | max | avg

struct PoolingAttentionOptions {
  std::int64_t heads = 1;
  std::int64_t head_dim = 64;
  std::vector<std::int64_t> grid;  // token grid: {T} or {H, W} (required)
  PoolMode mode = PoolMode::Conv;
  // Per axis; a single value applies to every axis. MViT: kernel 3, padding kernel/2.
  // A pooling with kernel 1 and stride 1 is the identity and is skipped (as in MViT v2).
  std::vector<std::int64_t> kernel{3};
  // Q's kernel per axis; empty: `kernel`. MViT v1 pools Q only where it is strided: there
  // kernel_q {1} with stride_q {1} leaves Q as it is (no conv, no norm).
  std::vector<std::int64_t> kernel_q;
  std::vector<std::int64_t> stride_q{1};
  std::vector<std::int64_t> stride_kv{1};
  bool rel_pos = true;           // MViT v2 decomposed relative position
  bool residual_pooling = true;  // MViT v2 residual pooling connection
  // The first token is a class token: not pooled (it is kept as is, then normalised with the
  // others), and excluded from the relative-position term and the residual.
  bool cls_token = false;
  double scale = 0;  // 0: 1/sqrt(head_dim)
  std::uint64_t seed = 0;  // parameter initialisation
};

struct PoolingAttentionOutput {
  at::Tensor out;                  // [B, H, Nq', d]
  std::vector<std::int64_t> grid;  // the pooled q grid (Nq' = its product, + 1 with a class token)
  at::Tensor keep;                 // [B, Nq'] bool, real pooled queries (defined when a mask was given)
};

class PoolingAttention : public torch::nn::Module {
 public:
  explicit PoolingAttention(PoolingAttentionOptions options);

  // q, k, v [B, H, (cls +) prod(grid), head_dim], already projected; mask [B, (cls +)
  // prod(grid)] bool, true = real token (optional). A batch element with no real token at
  // all gives NaN rows, as softmax does.
  PoolingAttentionOutput forward(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                 const at::Tensor& mask = {});

  // Pooling alone ('q', 'k' or 'v'), as forward applies it (with the same padding rule).
  at::Tensor pool(const at::Tensor& x, char which, const at::Tensor& mask = {}) const;

  const PoolingAttentionOptions& options() const { return options_; }
  const std::vector<std::int64_t>& q_grid() const { return q_grid_; }
  const std::vector<std::int64_t>& kv_grid() const { return kv_grid_; }
  // Relative-position table index per axis: [q_size, kv_size] int64 (MViT v2's dist).
  const std::vector<at::Tensor>& rel_pos_index() const { return rel_index_; }
  std::int64_t score_elements(std::int64_t batch) const;

 private:
  struct Pool {
    bool active = false;
    std::vector<std::int64_t> kernel, stride, padding;
    at::Tensor weight, norm_weight, norm_bias;  // conv mode
  };
  struct Pooled {
    at::Tensor x, keep;  // keep: [B, (cls +) pooled tokens] bool, when a mask was given
  };
  Pool make_pool(const std::string& name, const std::vector<std::int64_t>& kernel,
                 const std::vector<std::int64_t>& stride, std::uint64_t seed);
  Pooled apply_pool(const Pool& p, const at::Tensor& x, const at::Tensor& keep) const;
  at::Tensor pool_mask(const Pool& p, const at::Tensor& keep) const;
  void add_rel_pos(at::Tensor& attn, const at::Tensor& q_spatial) const;
  at::Tensor axis_logits(const at::Tensor& x, std::size_t axis, std::int64_t y0) const;

  PoolingAttentionOptions options_;
  std::vector<std::int64_t> q_grid_, kv_grid_;
  Pool pool_q_, pool_k_, pool_v_;
  std::vector<at::Tensor> rel_tables_;  // per axis [2*max(q, kv)-1, head_dim]
  std::vector<at::Tensor> rel_index_;
  std::vector<std::int64_t> residue_;  // per axis: K when kv is pooled K times more than q, else 1
};

// B*H*Nq'*Nkv' for these options (without building the module).
std::int64_t pooling_score_elements(std::int64_t batch, const PoolingAttentionOptions& options);
// The pooled grid for a grid, kernel and stride (per axis, MViT's padding kernel/2).
std::vector<std::int64_t> pooled_grid(const std::vector<std::int64_t>& grid, const std::vector<std::int64_t>& kernel,
                                      const std::vector<std::int64_t>& stride);

}  // namespace lrb
