#pragma once
// Checkpoints: model, optimizer, LibTorch's CPU generator and TrainState, written
// atomically (temporary file, fsync, rename, fsync folder) to checkpoints/<run key>.pt.
#include <filesystem>
#include <optional>
#include <string>

#include "suite/run/train_state.h"

namespace torch::optim {
class Optimizer;
}

namespace lrb {

class Model;

void save_checkpoint(const std::filesystem::path& path, const std::string& run_key, const Model& model,
                     const torch::optim::Optimizer& optimizer, const TrainState& state);

// Loads into `model`, `optimizer` and `state` (and the CPU generator). A checkpoint of
// another run key is a broken invariant; an unreadable one is reported and ignored by the
// caller (the run restarts from scratch).
void load_checkpoint(const std::filesystem::path& path, const std::string& run_key, Model& model,
                     torch::optim::Optimizer& optimizer, TrainState& state);

}  // namespace lrb
