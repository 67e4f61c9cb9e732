#pragma once
// ToMe's bipartite soft matching (Bolya et al., "Token Merging: Your ViT but Faster",
// ICLR 2023; facebookresearch/ToMe, tome/merge.py), and the stack of merges MergeOver
// (arXiv 2608.13141) undoes before a layer that needs the full token grid.
//
// One merge of r tokens out of T, on x [B, T, C] with a metric [B, T, C'] (the attention
// keys averaged over heads):
//   - set A = tokens 0, 2, 4, ..., set B = tokens 1, 3, 5, ...;
//   - each A token's most similar B token by cosine similarity of the metric;
//   - the r A tokens with the highest similarity merge into their B partners; with a class
//     token, token 0 is never merged;
//   - merged values are size-weighted averages, sizes add up (a token of size s stands for s
//     original tokens; proportional attention adds log s to its key logit);
//   - the output is ToMe's order: the unmerged A tokens (in descending order of similarity,
//     or in position order with a class token, which then stays first), then the B tokens.
// r is clamped to ToMe's limit floor((T - protected) / 2). The ranking is a stable sort
// (ToMe's argsort is not), so ties are broken by position; a zero metric row has no
// direction and counts as orthogonal to every token (ToMe's division gives NaN there).
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

namespace lrb {

struct TokenMatch {
  std::int64_t tokens = 0;  // T before the merge
  std::int64_t r = 0;       // tokens removed (after the clamp)
  at::Tensor unm_idx;       // [B, |A| - r] int64: indices into A of the tokens kept, in output order
  at::Tensor src_idx;       // [B, r]: indices into A of the tokens merged away
  at::Tensor dst_idx;       // [B, r]: indices into B of the tokens they merge into
  std::int64_t kept() const { return tokens - r; }
};

TokenMatch bipartite_soft_matching(const at::Tensor& metric, std::int64_t r, bool class_token = false);

struct MergedTokens {
  at::Tensor x;     // [B, T - r, C]
  at::Tensor size;  // [B, T - r, 1]
};

// Size-weighted average (ToMe's merge_wavg); `size` [B, T, 1], undefined for all ones.
MergedTokens merge_weighted(const TokenMatch& m, const at::Tensor& x, const at::Tensor& size = {});

// ToMe's unmerge: [B, T - r, C] -> [B, T, C], every merged token copied back to each
// position it absorbed. With fill_vacated = false the absorbed positions stay zero.
at::Tensor unmerge_tokens(const TokenMatch& m, const at::Tensor& x, bool fill_vacated = true);

// [B, T] bool: the positions a merge emptied (its absorbed A tokens).
at::Tensor vacated_positions(const TokenMatch& m);

// How a merged sequence is put back on its grid.
enum class UnmergeMode {
  Duplicate,      // ToMe's: each absorbed position gets its merged token (the paper's choice)
  Zero,           // absorbed positions are zero
  NeighbourMean,  // absorbed positions get the mean of the nearest surviving positions on the grid
  Exact,          // each token as it was before the merge plus the change its merged token saw since
};
const std::vector<std::string>& unmerge_mode_names();  // "duplicate", "zero", "neighbour-mean", "exact"
UnmergeMode parse_unmerge_mode(const std::string& name);  // throws std::invalid_argument
const char* unmerge_mode_name(UnmergeMode m);

// x [B, T, C] with T = prefix + prod(grid): every vacated grid position gets the mean of the
// surviving grid positions at the smallest Euclidean distance from it (all of them on a tie).
// The first `prefix` tokens (a class token) are not on the grid and never vacated.
at::Tensor fill_from_nearest(const at::Tensor& x, const at::Tensor& vacated, const std::vector<std::int64_t>& grid,
                             std::int64_t prefix = 0);

// Merges recorded in order, undone in reverse: MergeOver's unmerge stack. `exact` needs
// each merge's input and output, so a stack made with keep_inputs holds the unmerged tokens
// of every level (the memory a merge saves is then spent on the record).
class MergeStack {
 public:
  explicit MergeStack(bool keep_inputs = false) : keep_inputs_(keep_inputs) {}
  // Merges x (sizes: undefined for all ones) by `match` and records it.
  MergedTokens merge(TokenMatch match, const at::Tensor& x, const at::Tensor& size);
  // Undoes every recorded merge, last first: [B, T_top, C] -> [B, T_bottom, C]; empties the
  // stack. `grid` and `prefix` place the bottom tokens (neighbour-mean only).
  at::Tensor unmerge(const at::Tensor& x, UnmergeMode mode, const std::vector<std::int64_t>& grid = {},
                     std::int64_t prefix = 0);
  bool empty() const { return levels_.empty(); }
  std::size_t depth() const { return levels_.size(); }
  void clear() { levels_.clear(); }

 private:
  struct Level {
    TokenMatch match;
    at::Tensor before, after;  // kept only with keep_inputs
  };
  bool keep_inputs_;
  std::vector<Level> levels_;
};

}  // namespace lrb
