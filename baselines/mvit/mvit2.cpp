// MViT v2 (arXiv 2112.01526): MViT v1 plus decomposed relative positions and the residual
// pooling connection (options rel_pos, residual_pooling, both on), the width change inside
// the Q-strided block's attention, Q pooled in every block, no absolute positions (option
// abs_pos, off), and mean pooling (v2 drops the class token) after the final LayerNorm.
// Shared implementation and our documented choices: baselines/mvit/mvit.cpp.
#include "baselines/mvit/mvit.h"

namespace lrb {
namespace {

MvitVersion v2() {
  MvitVersion v;
  v.name = "mvit2";
  v.summary = "MViT v2: pooling attention with decomposed rel-pos and residual pooling, 1-D sequences or 2-D grids";
  v.v2 = true;
  v.default_pooling = "mean";
  v.default_abs_pos = false;
  return v;
}

LRB_REGISTER_MODEL(mvit_entry(v2()));

}  // namespace
}  // namespace lrb
