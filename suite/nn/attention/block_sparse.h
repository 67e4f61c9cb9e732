#pragma once
// BigBird's block-sparse attention (ITC): blocks of b tokens; query block j attends to the
// window blocks j-1, j, j+1, the global first and last blocks and r random blocks; the
// first and last query blocks attend to everything.
//
// Fallback (as Hugging Face's): when N <= (5+2r)*b the pattern is no sparser than dense,
// so the kernel computes full softmax attention and returns an empty table [H, 0, r].
// N not a multiple of b: tokens are padded to nb*b and the padding keys masked; the last
// block (global, attends to all) is the padded one, so it holds the last N-(nb-1)*b tokens.
// No N x N tensor on the sparse path: query blocks are processed a group at a time with
// batched gathers of their key blocks (see blocked_attention.h), training included.
#include <ATen/core/Tensor.h>

#include <cstdint>

#include "suite/nn/attention/blocked_attention.h"

namespace lrb {

struct BlockSparseOptions {
  std::int64_t block = 64;         // b (BigBird: 64)
  std::int64_t random_blocks = 3;  // r (BigBird: 3)
  std::uint64_t seed = 0;          // seeds the random block table
  double scale = 0;                // 0: 1/sqrt(d)
  std::int64_t max_score_elements = kDefaultMaxScoreElements;
};

struct BlockSparseResult {
  at::Tensor out;            // [B, H, N, d]
  at::Tensor random_blocks;  // int64 [H, nb-2, r] (CPU): row j-1 lists query block j's random key blocks
  bool dense_fallback = false;
};

// mask [B, N] bool, true = real token. `random_blocks` replays a recorded table (it must
// be [H, nb-2, r] with entries in [1, nb-2]); undefined draws one from options.seed.
// Outputs at masked query positions are unspecified.
BlockSparseResult block_sparse_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                         const BlockSparseOptions& options = {}, const at::Tensor& mask = {},
                                         const at::Tensor& random_blocks = {});

// The seeded table: for every head and query block j in 1..nb-2, r distinct key blocks
// drawn uniformly from 1..nb-2 without j-1, j, j+1 (the window) and 0, nb-1 (global).
// Needs nb >= 5 + r. Same seed, same table on every platform (lrb::Rng).
at::Tensor block_sparse_random_table(std::int64_t heads, std::int64_t blocks, std::int64_t random_blocks,
                                     std::uint64_t seed);

bool block_sparse_uses_dense(std::int64_t tokens, const BlockSparseOptions& options);

// Scores computed over the batch. Sparse: B*H*((nb-2)*b*(5+r)*b + 2*b*nb*b) (query blocks 1
// and nb-2 compute a masked duplicate of a global block); fallback: B*H*N*N.
std::int64_t block_sparse_score_elements(std::int64_t batch, std::int64_t heads, std::int64_t tokens,
                                         const BlockSparseOptions& options);

}  // namespace lrb
