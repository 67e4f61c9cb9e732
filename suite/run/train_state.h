#pragma once
// The part of a run's state that is not in the model or the optimizer: where training is,
// the data order, and the curves so far. Checkpointed with them, so a resumed run ends
// bit-identical (CPU) to one never stopped.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace lrb {

struct TrainState {
  std::int64_t step = 0;            // training steps completed
  std::int64_t epoch = 0;           // epochs of the data order started
  std::int64_t position = 0;        // next position within the current epoch's order
  std::vector<std::int64_t> order;  // the current epoch's permutation of training samples
  std::uint64_t order_rng[4] = {0, 0, 0, 0};
  std::int64_t last_eval_step = -1;
  std::map<std::string, std::vector<double>> curves;
  std::int64_t peak_bytes = 0;       // above the data, over all attempts
  std::int64_t peak_step_bytes = 0;  // largest single-step footprint
  int attempt = 1;                   // 1 for a fresh run, +1 per resume
  int threads = 0;                   // intra-op threads the run started with
};

}  // namespace lrb
