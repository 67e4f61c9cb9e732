#include "suite/nn/attention/block_sparse.h"

#include <ATen/ATen.h>

#include <numeric>
#include <vector>

#include "suite/core/errors.h"
#include "suite/core/seeds.h"
#include "suite/nn/attention/common.h"
#include "suite/nn/attention/kernel_registry.h"
#include "suite/nn/attention/softmax.h"

namespace lrb {
namespace {

constexpr const char* kName = "block_sparse";
constexpr std::int64_t kFixedSlots = 5;  // global first, window j-1, j, j+1, global last

// Middle query block j (1..nb-2; the layout's block j-1) sees key blocks
// slot_blocks[h][j-1][:] of the padded source viewed as [B, H*nb, b, d].
class BlockSparseLayout final : public KeyLayout {
 public:
  BlockSparseLayout(std::int64_t key_blocks, std::int64_t block, at::Tensor slot_blocks, at::Tensor key_keep,
                    at::Tensor duplicate)
      : nb_(key_blocks), b_(block), slot_blocks_(std::move(slot_blocks)), key_keep_(std::move(key_keep)),
        duplicate_(std::move(duplicate)) {
    H_ = slot_blocks_.size(0);
    S_ = slot_blocks_.size(2);
    const at::Tensor head_offset = at::arange(H_, slot_blocks_.options()).view({H_, 1, 1}) * nb_;
    flat_blocks_ = (slot_blocks_ + head_offset).contiguous();
  }
  std::int64_t num_blocks() const override { return nb_ - 2; }
  std::int64_t block_size() const override { return b_; }
  std::int64_t slots() const override { return S_ * b_; }

  at::Tensor gather(const at::Tensor& src, std::int64_t j0, std::int64_t n) const override {
    const std::int64_t B = src.size(0), d = src.size(3);
    // One batched index_select fetches every (head, block, slot) key block of the group.
    return src.view({B, H_ * nb_, b_, d}).index_select(1, index(j0, n)).view({B, H_, n, S_ * b_, d});
  }
  void scatter_add(at::Tensor& dsrc, const at::Tensor& grad, std::int64_t j0, std::int64_t n) const override {
    const std::int64_t B = dsrc.size(0), d = dsrc.size(3);
    dsrc.view({B, H_ * nb_, b_, d}).index_add_(1, index(j0, n), grad.reshape({B, H_ * n * S_, b_, d}));
  }
  at::Tensor drop_mask(std::int64_t j0, std::int64_t n) const override {
    // Duplicates: block 1's window j-1 and block nb-2's window j+1 are the global blocks.
    const at::Tensor dup = duplicate_.narrow(0, j0, n).view({1, 1, n, 1, S_, 1}).expand({1, 1, n, 1, S_, b_});
    if (!key_keep_.defined()) return dup.reshape({1, 1, n, 1, S_ * b_});
    const std::int64_t B = key_keep_.size(0);
    const at::Tensor keep = key_keep_.index_select(1, slot_blocks_.narrow(1, j0, n).reshape(-1))
                                .view({B, H_, n, 1, S_, b_});
    return keep.logical_not().logical_or(dup).reshape({B, H_, n, 1, S_ * b_});
  }

 private:
  at::Tensor index(std::int64_t j0, std::int64_t n) const { return flat_blocks_.narrow(1, j0, n).reshape(-1); }
  std::int64_t nb_, b_, H_ = 0, S_ = 0;
  at::Tensor slot_blocks_;  // [H, nb-2, 5+r] int64 key block ids
  at::Tensor flat_blocks_;  // the same plus h*nb: rows of the [B, H*nb, b, d] view
  at::Tensor key_keep_;     // [B, nb, b] bool, undefined when every key is real
  at::Tensor duplicate_;    // [nb-2, 5+r] bool
};

void check_options(const BlockSparseOptions& o) {
  if (o.block < 1) throw UserError(std::string(kName) + ": block must be >= 1");
  if (o.random_blocks < 0) throw UserError(std::string(kName) + ": random_blocks must be >= 0");
}

}  // namespace

bool block_sparse_uses_dense(std::int64_t tokens, const BlockSparseOptions& options) {
  return tokens <= (kFixedSlots + 2 * options.random_blocks) * options.block;
}

at::Tensor block_sparse_random_table(std::int64_t heads, std::int64_t blocks, std::int64_t r, std::uint64_t seed) {
  if (blocks < kFixedSlots + r)
    throw UserError(std::string(kName) + ": " + std::to_string(r) + " random blocks need at least " +
                    std::to_string(kFixedSlots + r) + " blocks; got " + std::to_string(blocks));
  at::Tensor table = at::empty({heads, std::max<std::int64_t>(blocks - 2, 0), r}, at::kLong);
  auto acc = table.accessor<std::int64_t, 3>();
  Rng rng(seed);
  std::vector<std::int64_t> pool;
  for (std::int64_t h = 0; h < heads; ++h) {
    for (std::int64_t j = 1; j <= blocks - 2; ++j) {
      pool.clear();
      for (std::int64_t c = 1; c <= blocks - 2; ++c)
        if (c < j - 1 || c > j + 1) pool.push_back(c);
      // Partial Fisher-Yates: r distinct picks.
      for (std::int64_t i = 0; i < r; ++i) {
        const auto pick = i + static_cast<std::int64_t>(rng.below(pool.size() - i));
        std::swap(pool[i], pool[pick]);
        acc[h][j - 1][i] = pool[i];
      }
    }
  }
  return table;
}

BlockSparseResult block_sparse_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                         const BlockSparseOptions& options, const at::Tensor& mask,
                                         const at::Tensor& random_blocks) {
  check_qkv(q, k, v, kName);
  check_options(options);
  if (q.size(2) != k.size(2)) throw UserError(std::string(kName) + ": q and k must have the same number of tokens");
  const std::int64_t B = q.size(0), H = q.size(1), N = q.size(2), b = options.block, r = options.random_blocks;
  const at::Tensor keep = check_key_mask(mask, B, N, q, kName);
  const double scale = resolve_scale(options.scale, q.size(3));
  BlockSparseResult result;
  if (block_sparse_uses_dense(N, options)) {
    result.out = softmax_attention(q, k, v, keep, scale);
    result.random_blocks = at::empty({H, 0, r}, at::kLong);
    result.dense_fallback = true;
    return result;
  }
  const std::int64_t nb = ceil_div(N, b), Np = nb * b;
  at::Tensor table;
  if (random_blocks.defined()) {
    table = random_blocks.cpu().to(at::kLong).contiguous();
    if (table.dim() != 3 || table.size(0) != H || table.size(1) != nb - 2 || table.size(2) != r)
      throw UserError(std::string(kName) + ": the random block table must be [H, nb-2, r] = [" + std::to_string(H) +
                      ", " + std::to_string(nb - 2) + ", " + std::to_string(r) + "]");
    if (r > 0 && (table.lt(1).any().item<bool>() || table.gt(nb - 2).any().item<bool>()))
      throw UserError(std::string(kName) + ": random blocks must lie in [1, nb-2]");
  } else {
    table = block_sparse_random_table(H, nb, r, options.seed);
  }
  result.random_blocks = table;

  // Slots per middle query block: [0, j-1, j, j+1, nb-1, random...].
  const std::int64_t S = kFixedSlots + r;
  at::Tensor slots = at::empty({H, nb - 2, S}, at::kLong);
  at::Tensor dup = at::zeros({nb - 2, S}, at::kBool);
  {
    auto s = slots.accessor<std::int64_t, 3>();
    auto t = table.accessor<std::int64_t, 3>();
    auto du = dup.accessor<bool, 2>();
    for (std::int64_t j = 1; j <= nb - 2; ++j) {
      du[j - 1][1] = (j - 1 == 0);
      du[j - 1][3] = (j + 1 == nb - 1);
      for (std::int64_t h = 0; h < H; ++h) {
        s[h][j - 1][0] = 0;
        s[h][j - 1][1] = j - 1;
        s[h][j - 1][2] = j;
        s[h][j - 1][3] = j + 1;
        s[h][j - 1][4] = nb - 1;
        for (std::int64_t i = 0; i < r; ++i) s[h][j - 1][kFixedSlots + i] = t[h][j - 1][i];
      }
    }
  }
  const auto device = q.device();
  at::Tensor keep_p;  // [B, Np], undefined when every key is real
  if (keep.defined() || Np != N) {
    keep_p = at::zeros({B, Np}, q.options().dtype(at::kBool));
    if (keep.defined()) keep_p.narrow(1, 0, N).copy_(keep);
    else keep_p.narrow(1, 0, N).fill_(true);
  }
  const auto layout = c10::make_intrusive<BlockSparseLayout>(
      nb, b, slots.to(device), keep_p.defined() ? keep_p.view({B, nb, b}) : at::Tensor(), dup.to(device));

  const at::Tensor qp = pad_tokens(q, 0, Np - N), kp = pad_tokens(k, 0, Np - N), vp = pad_tokens(v, 0, Np - N);
  const at::Tensor mid =
      blocked_attention(qp.narrow(2, b, (nb - 2) * b), kp, vp, layout, scale, options.max_score_elements);
  // The global query blocks see every key: dense rows, one block at a time.
  const at::Tensor q_edge = at::cat({qp.narrow(2, 0, b), qp.narrow(2, Np - b, b)}, 2);
  const auto dense = make_dense_layout(2, b, Np, keep_p.defined() ? keep_p.logical_not() : at::Tensor(), {});
  const at::Tensor edge = blocked_attention(q_edge, kp, vp, dense, scale, options.max_score_elements);
  result.out = at::cat({edge.narrow(2, 0, b), mid, edge.narrow(2, b, b)}, 2).narrow(2, 0, N);
  return result;
}

std::int64_t block_sparse_score_elements(std::int64_t batch, std::int64_t heads, std::int64_t tokens,
                                         const BlockSparseOptions& options) {
  if (block_sparse_uses_dense(tokens, options)) return batch * heads * tokens * tokens;
  const std::int64_t b = options.block, nb = ceil_div(tokens, b);
  return batch * heads * ((nb - 2) * b * (kFixedSlots + options.random_blocks) * b + 2 * b * nb * b);
}

namespace {

// `lrbench attend --kernel block_sparse`: its options and how it runs on q, k, v.
AttentionKernel block_sparse_kernel() {
  using namespace kernel_spec;
  return {"block_sparse",
          "BigBird ITC block-sparse attention (window, global, random blocks); dense when N <= (5+2r)*b",
          {{int_opt("block", 64, "block size b (BigBird: 64)", 1),
            int_opt("random_blocks", 3, "random key blocks r per query block (BigBird: 3)"),
            int_opt("seed", 0, "seed of the random block table"), scale_opt()}},
          {"mask"},
          [](const json& o, const AttentionTensors& in) {
            reject(in, "block_sparse", true, false, false);
            BlockSparseOptions bo;
            bo.block = o.at("block").get<std::int64_t>();
            bo.random_blocks = o.at("random_blocks").get<std::int64_t>();
            bo.seed = static_cast<std::uint64_t>(o.at("seed").get<std::int64_t>());
            bo.scale = o.at("scale").get<double>();
            auto res = block_sparse_attention(in.q, in.k, in.v, bo, in.mask);
            AttentionRun r;
            r.out = res.out;
            r.records["random_blocks"] = res.random_blocks;
            r.info["dense_fallback"] = res.dense_fallback;
            r.score_elements = block_sparse_score_elements(in.q.size(0), in.q.size(1), in.q.size(2), bo);
            return r;
          }};
}

}  // namespace

LRB_REGISTER_ATTENTION_KERNEL(40, block_sparse_kernel());

}  // namespace lrb
