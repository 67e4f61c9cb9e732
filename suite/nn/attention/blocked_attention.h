#pragma once
// The engine behind every sparse and chunked softmax kernel: queries in blocks, each block
// attends to its own list of keys (a "key layout"), computed a group of blocks at a time.
//
// Why a custom autograd Function: autograd through the plain ops would keep every group's
// scores and probabilities for the backward pass, so training memory would be that of the
// whole pattern (or O(N^2) for chunked softmax) again. Here the forward keeps only the
// output and one log-sum-exp per query; the backward recomputes each group's scores
// (flash-attention style). Peak memory: O(N*d) plus one group's working set, which
// `max_score_elements` caps (one block per group at least). Around the products, LibTorch's
// ops run on any device; on the CPU in float32 the softmax's row passes run fused
// (softmax_rows.h), and for heads of 8 a whole group (blocked_small_head.h). Where a layout's
// keys are a view of the source (KeyLayout::gradient_view), BLAS adds their gradients into
// the source's (batched_matmul_accumulate) instead of a product and a scatter. Double
// backward is not supported.
#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include <cstdint>

namespace lrb {

// Which keys each query block sees. Key tensors handed to gather/scatter_add are the
// "source" [B, H, Ns, d] the caller passed to blocked_attention (already padded as the
// layout expects).
class KeyLayout : public torch::CustomClassHolder {
 public:
  ~KeyLayout() override = default;
  virtual std::int64_t num_blocks() const = 0;  // query blocks
  virtual std::int64_t block_size() const = 0;  // queries per block
  virtual std::int64_t slots() const = 0;       // keys per query block
  // Most blocks one group may hold (a dense layout shares its keys and needs 1).
  virtual std::int64_t max_group() const { return num_blocks(); }
  // Keys of blocks [j0, j0 + n): [B, H, n, slots, d] (may be a view when no copy is needed).
  virtual at::Tensor gather(const at::Tensor& src, std::int64_t j0, std::int64_t n) const = 0;
  // Adds `grad` [B, H, n, slots, d] (the gradient of gather's result) into dsrc, which is a
  // contiguous zero-initialised tensor shaped like the source.
  virtual void scatter_add(at::Tensor& dsrc, const at::Tensor& grad, std::int64_t j0, std::int64_t n) const = 0;
  // Where the backward may add the group's key gradients [B, H, n, slots, d] directly: a view
  // of dsrc that reads as gather's result reads the source (its matrices may overlap), or
  // undefined where gather copies (then they go through scatter_add).
  virtual at::Tensor gradient_view(at::Tensor& /*dsrc*/, std::int64_t /*j0*/, std::int64_t /*n*/) const {
    return {};
  }
  // Scores to drop (true = drop), broadcastable to [B, H, n, block, slots]; undefined: none.
  virtual at::Tensor drop_mask(std::int64_t j0, std::int64_t n) const = 0;
  // Additive logit bias broadcastable to [B, H, n, block, slots]; undefined: none. Not
  // differentiated (e.g. ToMe's log token sizes).
  virtual at::Tensor bias(std::int64_t /*j0*/, std::int64_t /*n*/) const { return {}; }
};

// Every query block attends to all keys of the source: chunked dense softmax. `key_drop`
// [B, Nk] bool (true = drop) and `key_bias` [B, Nk] are optional.
c10::intrusive_ptr<KeyLayout> make_dense_layout(std::int64_t num_blocks, std::int64_t block, std::int64_t keys,
                                                 const at::Tensor& key_drop, const at::Tensor& key_bias);

// softmax(q k^T * scale + bias, dropped scores excluded) v, per query block.
// q [B, H, num_blocks * block, d]; k_src, v_src [B, H, Ns, d] (v's last dim may differ).
// Returns [B, H, num_blocks * block, dv]. Rows whose keys are all dropped give zeros.
at::Tensor blocked_attention(const at::Tensor& q, const at::Tensor& k_src, const at::Tensor& v_src,
                             const c10::intrusive_ptr<KeyLayout>& layout, double scale,
                             std::int64_t max_score_elements);

// Default working-set cap of one group: 2^19 score elements (2 MiB in float32; a group's
// scores, probabilities and their gradient then stay in cache-sized pieces).
inline constexpr std::int64_t kDefaultMaxScoreElements = std::int64_t{1} << 19;

}  // namespace lrb
