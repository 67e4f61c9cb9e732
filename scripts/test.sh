#!/usr/bin/env bash
# Sets up, builds and runs every test (labels: unit, slow, mpi, slurm).
# Extra arguments go to ctest, e.g. scripts/test.sh -L unit
# The slurm tests run on the one-node test cluster of slurm/test_cluster.sh: it is started
# here and stopped on exit (left alone if it was already up). If it cannot start, the
# slurm tests fail and say so; they never skip.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh

cluster=$PWD/slurm/test_cluster.sh
export LRB_SLURM_DIR=${LRB_SLURM_DIR:-/tmp/lrb-slurm}
export SLURM_CONF=$LRB_SLURM_DIR/slurm.conf
if "$cluster" status >/dev/null 2>&1; then
  echo "test: the Slurm test cluster in $LRB_SLURM_DIR is already up; it stays up"
else
  # Stop whatever part of it started, whatever happens below.
  trap '"$cluster" down' EXIT
  if ! "$cluster" up; then
    echo "test: the Slurm test cluster did not start (logs in $LRB_SLURM_DIR/log); the slurm tests will fail" >&2
  fi
fi

cd build
ctest --output-on-failure --timeout 1200 -j "${LRB_JOBS:-$(nproc)}" "$@"
