#include "suite/nn/token_merging.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>  // at::NoGradGuard (ATen.h no longer brings it in LibTorch 2.x)

#include <limits>
#include <stdexcept>

#include "suite/core/errors.h"
#include "suite/nn/batched_matmul.h"

namespace lrb {
namespace {

at::Tensor expand_index(const at::Tensor& idx, std::int64_t channels) {
  return idx.unsqueeze(-1).expand({idx.size(0), idx.size(1), channels});
}

// ToMe's merge with mode "sum": [B, T, C] -> [B, T - r, C] (unmerged A, then B).
at::Tensor merge_sum(const TokenMatch& m, const at::Tensor& x) {
  const std::int64_t T = x.size(1), C = x.size(2);
  const at::Tensor src = x.slice(1, 0, T, 2), dst = x.slice(1, 1, T, 2);
  const at::Tensor unm = src.gather(1, expand_index(m.unm_idx, C));
  const at::Tensor moved = src.gather(1, expand_index(m.src_idx, C));
  return at::cat({unm, dst.scatter_add(1, expand_index(m.dst_idx, C), moved)}, 1);
}

void check_tokens(const TokenMatch& m, const at::Tensor& x, std::int64_t expected, const char* what) {
  if (x.dim() != 3 || x.size(1) != expected || (m.unm_idx.defined() && x.size(0) != m.unm_idx.size(0)))
    throw std::invalid_argument(std::string(what) + ": expected [B, " + std::to_string(expected) + ", C] tokens");
}

}  // namespace

TokenMatch bipartite_soft_matching(const at::Tensor& metric, std::int64_t r, bool class_token) {
  if (metric.dim() != 3 || !at::isFloatingType(metric.scalar_type()))
    throw std::invalid_argument("token merging: the metric must be a floating-point [B, T, C] tensor");
  TokenMatch m;
  m.tokens = metric.size(1);
  const std::int64_t protected_tokens = class_token ? 1 : 0;
  m.r = std::max<std::int64_t>(0, std::min(r, (m.tokens - protected_tokens) / 2));
  if (m.r == 0) return m;
  at::NoGradGuard no_grad;
  at::Tensor k = metric.detach();
  k = k / k.norm(2, {-1}, true).clamp_min(1e-30);
  const at::Tensor a = k.slice(1, 0, m.tokens, 2), b = k.slice(1, 1, m.tokens, 2);
  at::Tensor scores = batched_matmul(a, b.transpose(-1, -2));
  if (class_token) scores.select(1, 0).fill_(-std::numeric_limits<double>::infinity());
  const auto [node_max, node_idx] = scores.max(-1);
  // The optional<bool> must be spelled out: a plain `true` picks sort(self, dim, descending).
  const c10::optional<bool> stable = true;
  const at::Tensor edge_idx = std::get<1>(at::sort(node_max, stable, -1, /*descending=*/true));
  m.unm_idx = edge_idx.slice(1, m.r);
  m.src_idx = edge_idx.slice(1, 0, m.r);
  m.dst_idx = node_idx.gather(1, m.src_idx);
  // ToMe keeps the class token first by putting the kept A tokens in position order.
  if (class_token) m.unm_idx = std::get<0>(at::sort(m.unm_idx, stable, 1, /*descending=*/false));
  return m;
}

MergedTokens merge_weighted(const TokenMatch& m, const at::Tensor& x, const at::Tensor& size) {
  check_tokens(m, x, m.tokens, "merge");
  at::Tensor s = size.defined() ? size : at::ones({x.size(0), x.size(1), 1}, x.options());
  if (m.r == 0) return {x, s};
  const at::Tensor total = merge_sum(m, s);
  return {merge_sum(m, x * s) / total, total};
}

at::Tensor unmerge_tokens(const TokenMatch& m, const at::Tensor& x, bool fill_vacated) {
  check_tokens(m, x, m.kept(), "unmerge");
  if (m.r == 0) return x;
  const std::int64_t B = x.size(0), C = x.size(2), T = m.tokens;
  const std::int64_t unm_len = m.unm_idx.size(1);
  const at::Tensor unm = x.slice(1, 0, unm_len), dst = x.slice(1, unm_len);
  const at::Tensor odd = (at::arange(dst.size(1), m.unm_idx.options()) * 2 + 1).unsqueeze(0).expand({B, dst.size(1)});
  at::Tensor out = at::zeros({B, T, C}, x.options());
  out = out.scatter(1, expand_index(odd, C), dst);
  out = out.scatter(1, expand_index(m.unm_idx * 2, C), unm);
  if (fill_vacated) out = out.scatter(1, expand_index(m.src_idx * 2, C), dst.gather(1, expand_index(m.dst_idx, C)));
  return out;
}

at::Tensor vacated_positions(const TokenMatch& m) {
  const std::int64_t B = m.unm_idx.defined() ? m.unm_idx.size(0) : 0;
  if (m.r == 0) throw std::invalid_argument("vacated_positions: a merge of no tokens has no batch to describe");
  return at::zeros({B, m.tokens}, m.src_idx.options().dtype(at::kBool)).scatter(1, m.src_idx * 2, true);
}

const std::vector<std::string>& unmerge_mode_names() {
  static const std::vector<std::string> names = {"duplicate", "zero", "neighbour-mean", "exact"};
  return names;
}

UnmergeMode parse_unmerge_mode(const std::string& name) {
  for (UnmergeMode m : {UnmergeMode::Duplicate, UnmergeMode::Zero, UnmergeMode::NeighbourMean, UnmergeMode::Exact})
    if (name == unmerge_mode_name(m)) return m;
  throw std::invalid_argument("unknown unmerge mode '" + name + "'");
}

const char* unmerge_mode_name(UnmergeMode m) {
  switch (m) {
    case UnmergeMode::Duplicate: return "duplicate";
    case UnmergeMode::Zero: return "zero";
    case UnmergeMode::NeighbourMean: return "neighbour-mean";
    case UnmergeMode::Exact: return "exact";
  }
  return "?";
}

at::Tensor fill_from_nearest(const at::Tensor& x, const at::Tensor& vacated, const std::vector<std::int64_t>& grid,
                             std::int64_t prefix) {
  std::int64_t G = 1;
  for (auto g : grid) G *= g;
  if (grid.empty() || x.dim() != 3 || x.size(1) != prefix + G || vacated.dim() != 2 || vacated.size(0) != x.size(0) ||
      vacated.size(1) != x.size(1))
    throw std::invalid_argument("neighbour-mean: tokens [B, prefix + prod(grid), C] and a vacated mask [B, T] are needed");
  const std::int64_t B = x.size(0);
  // Grid coordinates of every position, row-major; squared distances between all pairs.
  at::Tensor coords = at::empty({G, static_cast<std::int64_t>(grid.size())}, x.options());
  {
    auto flat = at::arange(G, at::kLong);
    std::int64_t stride = G;
    for (std::size_t a = 0; a < grid.size(); ++a) {
      stride /= grid[a];
      coords.select(1, static_cast<std::int64_t>(a)).copy_(flat.div(stride, "floor").remainder(grid[a]));
    }
  }
  const at::Tensor diff = coords.unsqueeze(1) - coords.unsqueeze(0);
  const at::Tensor d2 = (diff * diff).sum(-1);  // [G, G]
  const at::Tensor body = x.slice(1, prefix);
  const at::Tensor vac = vacated.slice(1, prefix).to(x.device(), at::kBool);
  const at::Tensor gone = vac.unsqueeze(1);  // columns that hold no survivor
  const at::Tensor dist = d2.unsqueeze(0).expand({B, G, G}).masked_fill(gone, std::numeric_limits<double>::infinity());
  const at::Tensor nearest = dist.amin(-1, true);
  const at::Tensor w = dist.eq(nearest).logical_and(gone.logical_not()).to(x.scalar_type());
  const at::Tensor fill = batched_matmul(w, body) / w.sum(-1, true).clamp_min(1);
  const at::Tensor filled = at::where(vac.unsqueeze(-1), fill, body);
  return prefix > 0 ? at::cat({x.slice(1, 0, prefix), filled}, 1) : filled;
}

MergedTokens MergeStack::merge(TokenMatch match, const at::Tensor& x, const at::Tensor& size) {
  MergedTokens out = merge_weighted(match, x, size);
  Level level{std::move(match), {}, {}};
  if (keep_inputs_) {
    level.before = x;
    level.after = out.x;
  }
  levels_.push_back(std::move(level));
  return out;
}

at::Tensor MergeStack::unmerge(const at::Tensor& x, UnmergeMode mode, const std::vector<std::int64_t>& grid,
                               std::int64_t prefix) {
  LRB_CHECK(mode != UnmergeMode::Exact || keep_inputs_, "exact unmerging needs a stack that keeps each merge's input");
  at::Tensor y = x, vac;
  for (auto it = levels_.rbegin(); it != levels_.rend(); ++it) {
    const TokenMatch& m = it->match;
    if (mode == UnmergeMode::Exact) {
      // Each token as it entered the merge, plus what its merged token has gained since.
      y = it->before + unmerge_tokens(m, y - it->after, true);
      continue;
    }
    y = unmerge_tokens(m, y, mode == UnmergeMode::Duplicate);
    if (mode == UnmergeMode::Duplicate || m.r == 0) {
      if (vac.defined()) vac = unmerge_tokens(m, vac.unsqueeze(-1).to(x.scalar_type()), true).squeeze(-1).gt(0.5);
      continue;
    }
    // A position stays vacated through the levels below: its copies are vacated too.
    const at::Tensor here = vacated_positions(m).to(x.device());
    vac = vac.defined() ? unmerge_tokens(m, vac.unsqueeze(-1).to(x.scalar_type()), true).squeeze(-1).gt(0.5).logical_or(here)
                        : here;
  }
  levels_.clear();
  if (mode == UnmergeMode::NeighbourMean && vac.defined()) y = fill_from_nearest(y, vac, grid, prefix);
  return y;
}

}  // namespace lrb
