#!/usr/bin/env bash
# Sets up, builds and runs every test (labels: unit, slow, mpi, slurm).
# Extra arguments go to ctest, e.g. scripts/test.sh -L unit
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh
cd build
ctest --output-on-failure --timeout 1200 -j "${LRB_JOBS:-$(nproc)}" "$@"
