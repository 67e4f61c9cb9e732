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
ctest_args=()
if [ "$(id -u)" -ne 0 ]; then
  # The one-node test cluster runs slurmd as root (slurm/test_cluster.sh); without root
  # the slurm tests cannot run, and are left out in plain words rather than failed.
  for a in "$@"; do
    case "$a" in *slurm*) echo "test: the slurm tests need root (the test cluster runs slurmd as root): run sudo scripts/test.sh $*" >&2; exit 2 ;; esac
  done
  echo "test: not root: every test but the slurm label (their test cluster runs slurmd as root; run as root to include them)"
  ctest_args=(-LE slurm)
elif "$cluster" status >/dev/null 2>&1; then
  echo "test: the Slurm test cluster in $LRB_SLURM_DIR is already up; it stays up"
else
  # Stop whatever part of it started, whatever happens below.
  trap '"$cluster" down' EXIT
  if ! "$cluster" up; then
    echo "test: the Slurm test cluster did not start (logs in $LRB_SLURM_DIR/log); the slurm tests will fail" >&2
  fi
fi

cd build
ctest --output-on-failure --timeout 1200 -j "${LRB_JOBS:-$(nproc)}" ${ctest_args[@]+"${ctest_args[@]}"} "$@"
