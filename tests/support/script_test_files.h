#pragma once
// The TorchScript files the torchscript model's tests load, made once per test process by
// tests/fixtures/torchscript/make_modules.py with the PyTorch of this machine (Debian's
// python3-torch, the same release as the LibTorch lrbench builds with: scripts/setup.sh).
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "tests/support/subprocess.h"

namespace lrb::test {

// A sweep of the example model saved for fashion-mnist's images [1, 28, 28] (grid.pt: 4x4
// patches, 49 tokens, dim 16; a few milliseconds a step) on 2,000 training images.
inline std::string python_model_sweep(const std::filesystem::path& model, int seeds, int steps,
                                      const std::string& extra_sweep = "", const std::string& extra_model = "") {
  return R"([sweep]
name = "python-model"
seeds = )" + std::to_string(seeds) + R"(
base_seed = 1
threads = 1
)" + extra_sweep + R"(
[train]
steps = )" + std::to_string(steps) + R"(
batch_size = 16
lr = 0.003
eval_every = )" + std::to_string(steps) + R"(
eval_size = 500

[[task]]
name = "fashion-mnist"
train_size = 2000

[[model]]
name = "torchscript"
file = ")" + model.string() + "\"\n" + extra_model;
}

// The listops-like task the token modules are made for: ids below 16, pad 0, 48 tokens, 10 classes.
inline constexpr int kScriptVocab = 16, kScriptSeqLen = 48, kScriptClasses = 10;

// The folder holding good.pt, grid.pt, grid_wider.pt and one file per way of being wrong
// (make_modules.py lists them). A failure to make them fails the calling test with
// Python's output: these tests never skip.
inline std::filesystem::path script_test_files() {
  static std::unique_ptr<TempDir> dir;
  static std::string failure;
  if (!dir && failure.empty()) {
    auto made = std::make_unique<TempDir>();
    // Debian's interpreter, which sees Debian's python3-torch (another python3 may come first in PATH).
    const Result r = run({"/usr/bin/python3", std::string(LRB_SOURCE_DIR) + "/tests/fixtures/torchscript/make_modules.py",
                          made->path().string(), std::to_string(kScriptVocab), std::to_string(kScriptSeqLen),
                          std::to_string(kScriptClasses)},
                         std::chrono::seconds(300));
    if (r.code == 0) dir = std::move(made);
    else failure = "make_modules.py failed (exit " + std::to_string(r.code) + "; python3 with torch is needed: "
                   "scripts/setup.sh installs Debian's python3-torch):\n" + r.output;
  }
  if (!dir) ADD_FAILURE() << failure;
  return dir ? dir->path() : std::filesystem::path("/nonexistent-torchscript-test-files");
}

}  // namespace lrb::test
