#pragma once
// The texts of slurm/sweep.sbatch.in and slurm/final.sbatch.in, compiled in by CMake
// (suite/CMakeLists.txt), so that an installed lrbench needs no source tree.
namespace lrb {
extern const char* const kSweepSbatchTemplate;
extern const char* const kFinalSbatchTemplate;
}  // namespace lrb
