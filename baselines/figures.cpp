// The figures the baselines' measurement runs record (Model::figures), declared for every
// lrbench program: torch-free, so that lrbench-results links it too (CMakeLists.txt).
#include "suite/contracts/figures.h"

namespace lrb {

// MixFormer: max|O_form − O_parallel| / max|O_parallel|, a correctness gap: smaller is better.
LRB_DECLARE_FIGURE(model_figure("form_gap", FigureUnit::Plain, Direction::Lower, false, "mixformer"));

}  // namespace lrb
