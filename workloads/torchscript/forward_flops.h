#pragma once
#include <cstdint>

// Counts the forward FLOPs of a model LibTorch runs but lrbench did not write (a
// TorchScript module): while a counter lives, every matrix product, convolution and fused
// attention that runs on this thread adds its multiply-adds (x 2) from its inputs' shapes,
// as PyTorch's profiler counts them. Element-wise work (activations, norms, softmax) is not
// counted, as in the built-in models' analytic counts.
namespace lrb {

class MatmulFlopCounter {
 public:
  MatmulFlopCounter();
  ~MatmulFlopCounter();
  MatmulFlopCounter(const MatmulFlopCounter&) = delete;
  MatmulFlopCounter& operator=(const MatmulFlopCounter&) = delete;
  // What ran since the counter started; 0 when nothing countable ran.
  double flops() const;

 private:
  std::uint64_t handle_;
};

}  // namespace lrb
