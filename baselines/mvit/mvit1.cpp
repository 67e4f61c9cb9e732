// MViT v1 (arXiv 2104.11227): pooling attention (conv pooling + LayerNorm) in stages, no
// relative positions, no residual pooling; learned absolute positions; a class token
// summarises the sequence (v1's CLS_EMBED_ON). Q is pooled only in the Q-strided blocks (K
// and V in every block). The width doubles in the MLP of the block before each Q-strided
// block.
// Shared implementation and our documented choices: baselines/mvit/mvit.cpp.
#include "baselines/mvit/mvit.h"

namespace lrb {
namespace {

MvitVersion v1() {
  MvitVersion v;
  v.name = "mvit1";
  v.summary = "MViT v1: multiscale pooling-attention stages (conv pooling), 1-D sequences or 2-D grids";
  v.v2 = false;
  v.default_pooling = "cls";
  v.default_abs_pos = true;
  return v;
}

LRB_REGISTER_MODEL(mvit_entry(v1()));

}  // namespace
}  // namespace lrb
