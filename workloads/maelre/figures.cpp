// The figures MAELRE's measurement runs record (Model::figures), declared for every lrbench
// program: torch-free, so that lrbench-results links it too (CMakeLists.txt).
#include "suite/contracts/figures.h"

namespace lrb {

// The counting allocator's peak of the largest attention call: an exact count on a CPU.
LRB_DECLARE_FIGURE(model_figure("attention_peak_bytes", FigureUnit::Bytes, Direction::Lower, true, "maelre"));

}  // namespace lrb
