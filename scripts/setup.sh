#!/usr/bin/env bash
# Installs every Debian package lrbench needs (idempotent: installs only what is missing).
# Run as root on Debian 12 the first time; afterwards any user may run it. Safe to run again.
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake ninja-build ccache pkg-config git
  # scripts/fuzz.sh: clang with libFuzzer and the sanitizers' runtimes
  clang libclang-rt-14-dev
  # LibTorch and a fast BLAS (without OpenBLAS, Debian's LibTorch runs the reference BLAS, ~4x slower)
  libtorch-dev libopenblas0-openmp
  # MPI, HDF5
  libopenmpi-dev openmpi-bin libhdf5-dev hdf5-tools
  # Slurm (sbatch/srun and the one-node test cluster of slurm/test_cluster.sh) and its authentication
  slurm-wlm munge
  # slurm/multinode_cluster.sh: a node per network namespace (ip, nsenter, unshare)
  iproute2 util-linux
  # the libraries the code uses
  libgtest-dev libgmock-dev libbenchmark-dev libtomlplusplus-dev libcli11-dev nlohmann-json3-dev
  libfmt-dev libboost-dev libssl-dev
  # reports: gnuplot draws the HTML report's plots; headless Chromium opens that page in a test;
  # Node.js parses the page's scripts (suite/report/html/*.js) in a test
  gnuplot-nox chromium nodejs
  # the real data set
  dataset-fashion-mnist
  # scripts/test_debian13.sh: the Debian 13 root it builds and tests in
  mmdebstrap
  # tests/bench/results_scale.sh: GNU time measures peak memory
  time
  # reference statistics for fixtures, and h5py for inspecting result files
  python3 python3-numpy python3-scipy python3-statsmodels python3-h5py
  # models written in PyTorch (model = "torchscript"): the PyTorch of the LibTorch above,
  # which the tests save their modules with
  python3-torch
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

# Only installing needs root: once everything is installed, any user may build and test.
if [ ${#missing[@]} -gt 0 ] && [ "$(id -u)" -ne 0 ]; then
  echo "setup: ${#missing[@]} packages are missing (${missing[*]}); installing them needs root: run sudo scripts/setup.sh once" >&2
  exit 2
fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${#missing[@]} packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "setup: every package is installed"
fi

# OpenBLAS must be the libblas.so.3 LibTorch loads: say so loudly if it is not.
blas=$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 || true)
case "$blas" in
  *openblas*) echo "setup: BLAS is $blas" ;;
  *) echo "setup: WARNING: libblas.so.3 is $blas (reference BLAS); run: update-alternatives --config libblas.so.3-x86_64-linux-gnu" >&2 ;;
esac
