#pragma once
// Which runs of an expanded sweep one process runs: those of its shard (--shard, by run key)
// and, with --only, those named by key (`lrbench ab` runs one cell of a sweep at a time, each
// build in turn, this way).
#include <cstddef>
#include <string>
#include <vector>

#include "suite/config/run_spec.h"
#include "suite/config/shard.h"

namespace lrb {

// Indices into `runs`, in their order. `only`: run keys, or prefixes of at least 8 hex digits
// that name one run; empty: every run of the shard. UserError for a name no run has, a
// prefix two runs share, or --only on a sequential study (its waves decide what runs).
std::vector<std::size_t> selected_runs(const std::vector<RunSpec>& runs, const Shard& shard,
                                       const std::vector<std::string>& only, bool sequential);

}  // namespace lrb
