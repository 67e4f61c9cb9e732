#pragma once
// Checkpoints: model, optimizer, LibTorch's CPU generator and TrainState, written
// atomically (temporary file, fsync, rename, fsync folder) to checkpoints/<run key>.pt,
// behind a whole-file digest (suite/core/file_digest.h): the torch archive has no checksum
// of its own, and a flipped byte in a weight would resume a different run.
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>

#include "suite/run/train_state.h"

namespace torch::optim {
class Optimizer;
}

namespace lrb {

class Model;

void save_checkpoint(const std::filesystem::path& path, const std::string& run_key, const Model& model,
                     const torch::optim::Optimizer& optimizer, const TrainState& state);

// Why a checkpoint cannot be used: empty, truncated, a digest mismatch, not a checkpoint,
// another run's, or not loadable into this run's model.
class BadCheckpoint : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Verifies the digest, then loads into `model`, `optimizer` and `state` (and the CPU
// generator). Throws BadCheckpoint; `model` and `optimizer` may then be partly loaded, so
// the caller builds them again and restarts the run from scratch.
void load_checkpoint(const std::filesystem::path& path, const std::string& run_key, Model& model,
                     torch::optim::Optimizer& optimizer, TrainState& state);

}  // namespace lrb
