#!/usr/bin/env bash
# Sets up, builds and runs every test (labels: unit, slow, mpi, slurm, multinode).
# Extra arguments go to ctest, e.g. scripts/test.sh -L unit
# The slurm tests run on the one-node test cluster of slurm/test_cluster.sh, the multinode
# tests on the three-node cluster of slurm/multinode_cluster.sh: each is started here and
# stopped on exit (left alone if it was already up). If one cannot start, its tests fail
# and say so; they never skip.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh

cluster=$PWD/slurm/test_cluster.sh
multinode=$PWD/slurm/multinode_cluster.sh
export LRB_SLURM_DIR=${LRB_SLURM_DIR:-/tmp/lrb-slurm}
export LRB_MN_DIR=${LRB_MN_DIR:-/tmp/lrb-multinode}
export SLURM_CONF=$LRB_SLURM_DIR/slurm.conf
ctest_args=()
stop=()
if [ "$(id -u)" -ne 0 ]; then
  # The test clusters run slurmd as root (and the multinode one makes network namespaces);
  # without root their tests cannot run, and are left out in plain words rather than failed.
  for a in "$@"; do
    case "$a" in *slurm*|*multinode*) echo "test: the slurm and multinode tests need root (their test clusters run slurmd as root): run sudo scripts/test.sh $*" >&2; exit 2 ;; esac
  done
  echo "test: not root: every test but the slurm and multinode labels (their test clusters run slurmd as root; run as root to include them)"
  ctest_args=(-LE 'slurm|multinode')
else
  # Stop whatever part of a cluster this script started, whatever happens below.
  trap 'for c in "${stop[@]}"; do "$c" down; done' EXIT
  if "$cluster" status >/dev/null 2>&1; then
    echo "test: the Slurm test cluster in $LRB_SLURM_DIR is already up; it stays up"
  else
    stop+=("$cluster")
    "$cluster" up || echo "test: the Slurm test cluster did not start (logs in $LRB_SLURM_DIR/log); the slurm tests will fail" >&2
  fi
  if "$multinode" status >/dev/null 2>&1; then
    echo "test: the multinode test cluster in $LRB_MN_DIR is already up; it stays up"
  else
    stop+=("$multinode")
    "$multinode" up || echo "test: the multinode test cluster did not start (logs in $LRB_MN_DIR); the multinode tests will fail" >&2
  fi
fi

cd build
ctest --output-on-failure --timeout 1200 -j "${LRB_JOBS:-$(nproc)}" ${ctest_args[@]+"${ctest_args[@]}"} "$@"
