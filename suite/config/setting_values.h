#pragma once
// A stored run's settings as flat columns, for exports that give every setting its own
// column (suite/report/tidy_rows.h). Implemented beside varying_paths (expand.cpp), which
// flattens the same way.
#include <map>
#include <string>

#include "suite/contracts/options.h"

namespace lrb {

// Every setting of a stored spec by its flattened path: the task's options and seq_len
// ("task.seq_len"), the model's options ("model.attention"), [train] ("train.lr"), and a
// measurement run's "measure.*" and an evaluated run's "evaluate.*" where the spec has them.
// An array stays one value.
std::map<std::string, json> setting_values(const json& spec);

}  // namespace lrb
