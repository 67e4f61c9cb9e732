#pragma once
// The multiscale vision transformer shared by the "mvit1" and "mvit2" registry entries
// (baselines/mvit/mvit1.cpp, mvit2.cpp; the design and our choices are in mvit.cpp's header).
#include <string>

#include "suite/registry/registry.h"

namespace lrb {

struct MvitVersion {
  std::string name;     // registry name
  std::string summary;  // one line for `lrbench list`
  bool v2 = false;      // width changes in the attention, Q pooled in every block, rel-pos, residual pooling
  std::string default_pooling;  // "cls" (v1's class token) or "mean" (v2)
  bool default_abs_pos = true;  // learned absolute positions (v1: yes; v2: none, rel-pos instead)
};

// The registry entry for one version: schema, resolve hook, FLOPs, factory.
ModelEntry mvit_entry(const MvitVersion& version);

}  // namespace lrb
