#!/usr/bin/env bash
# Builds lrbench and runs its tests on Debian 13 (trixie: LibTorch 2.6, HDF5 1.14, Open MPI 5,
# GCC 14) inside a root made with mmdebstrap, next to the Debian 12 build of scripts/test.sh.
# Run as root (mmdebstrap, chroot and mounts need it). Extra arguments go to ctest.
#
# The root is made once and kept in $LRB_DEBIAN13_ROOT (/var/cache/lrbench/debian13-root);
# it is made again only when the package list below changes. The source is bind-mounted
# read-only at /src; the build (with its own ccache) lives in the root, so a second call
# rebuilds only what changed. Every mount lives in a private mount namespace and goes away
# with the script, whatever happens.
#
# Labels run: unit, slow, mpi. NOT run: the slurm tests (they need slurmctld, slurmd and
# munged started as services; the Debian 12 run of scripts/test.sh covers them), and the
# tests listed in `known_failures` below, which fail on Debian 13 for the reason given
# beside each (open work of issue 13): both lists are printed on every run.
# With LRB_DEBIAN13_BENCH=FILTER it runs the benchmarks matching FILTER instead of the tests
# (their JSON: $LRB_DEBIAN13_ROOT/build/bench.json; scripts/fast_paths_side_by_side.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD

# shellcheck source=scripts/lib/debian_root.sh
. scripts/lib/debian_root.sh
require_root_tools test_debian13.sh

root=${LRB_DEBIAN13_ROOT:-/var/cache/lrbench/debian13-root}
jobs=${LRB_JOBS:-$(nproc)}
packages=(
  # toolchain (GCC 14) and LibTorch 2.6 with OpenBLAS
  g++ cmake ninja-build ccache pkg-config git libtorch-dev libopenblas0-openmp
  # Open MPI 5, HDF5 1.14
  libopenmpi-dev openmpi-bin libhdf5-dev
  # the libraries the code and the tests use
  libgtest-dev libgmock-dev libbenchmark-dev libtomlplusplus-dev libcli11-dev nlohmann-json3-dev
  libfmt-dev libboost-dev libssl-dev zlib1g-dev
  # what the report and data tests use
  gnuplot-nox chromium dataset-fashion-mnist
  # the torchscript model's tests save their modules with the PyTorch of this LibTorch
  python3-torch
)
list=$(IFS=,; echo "${packages[*]}")
# Known to fail on Debian 13 (pass on Debian 12), each with what differs.
known_failures=(
  "TaskContract.ShapesDeterminismAndGoldenChecksums|the generated task data differs from the golden digests under LibTorch 2.6: data generation is not bit-identical across LibTorch releases"
  "ModelMaelre.TauReadingsAreOptions|expects bit equality of two tau paths that LibTorch 2.6 rounds differently"
  "StoreTest.FlippedMetricByteIsAChecksumError|HDF5 1.14 reads a one-value metric chunk with a flipped byte without a Fletcher32 error"
  "DataCache.FlippedByteBehindTheDigestIsAChunkChecksumError|HDF5 1.14: the flipped byte is not reported as a chunk checksum error"
)
exclude=""
for k in "${known_failures[@]}"; do exclude+="${exclude:+|}^${k%%|*}\$"; done
start=$(date +%s)

if [ -f "$root/.lrb-packages" ] && [ "$(cat "$root/.lrb-packages")" = "$list" ]; then
  echo "debian13: reusing the root in $root"
else
  echo "debian13: making a Debian 13 root in $root (mmdebstrap, about a minute or two)"
  rm -rf "$root.tmp" "$root"
  mkdir -p "$(dirname "$root")"
  # Made aside and renamed, so an interrupted mmdebstrap never leaves a root that looks whole.
  mmdebstrap --quiet --variant=apt --include="$list" trixie "$root.tmp"
  echo "$list" >"$root.tmp/.lrb-packages"
  mv "$root.tmp" "$root"
  echo "debian13: root ready after $(( $(date +%s) - start )) s"
fi
mkdir -p "$root/src" "$root/build" "$root/root/.ccache"

# Inside the root: Open MPI 5 refuses root unless both variables are set (its
# --allow-run-as-root flag, which the tests pass, needs them as well under PRRTE).
inner=$(cat <<'EOF'
set -euo pipefail
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 CCACHE_DIR=/root/.ccache
# Debian 13's LibTorch runs OpenMP with one spinning thread per core: two tests side by side
# (ctest -j) then spin against each other, and a 3 s model test took over 300 s (measured).
# One thread per test when tests run in parallel; lrbench's runs set their own thread count.
if [ "$LRB_JOBS" -gt 1 ]; then export OMP_NUM_THREADS=1; fi
echo "debian13: $(. /etc/os-release; echo "$PRETTY_NAME"), $(g++ --version | head -1), LibTorch $(dpkg-query -W -f='${Version}' libtorch-dev), HDF5 $(dpkg-query -W -f='${Version}' libhdf5-dev), $(mpirun --version | head -1)"
git config --global --add safe.directory /src
if [ ! -f /build/CMakeCache.txt ]; then
  cmake -S /src -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release
fi
cmake --build /build -j "$LRB_JOBS" -- -k 0  # every error of the build at once
cd /build
if [ -n "$LRB_BENCH" ]; then
  # The benchmarks instead of the tests (scripts/fast_paths_side_by_side.sh): one thread,
  # three repetitions, their JSON kept in the root's /build.
  echo "debian13: running the benchmarks matching $LRB_BENCH"
  OMP_NUM_THREADS=1 tests/lrb_bench --benchmark_filter="$LRB_BENCH" --benchmark_repetitions=3 \
    --benchmark_report_aggregates_only=true --benchmark_format=json --benchmark_out=/build/bench.json >/dev/null
  exit 0
fi
echo "debian13: running the unit, slow and mpi tests; the slurm tests are NOT run here (no Slurm daemons in the root; scripts/test.sh runs them on Debian 12)"
ctest --output-on-failure --timeout 1200 -j "$LRB_JOBS" -LE slurm -E "$LRB_EXCLUDE" "$@"
EOF
)

# A worktree's .git is a file naming a folder outside the source: the git revision is then
# unknown inside the root (recorded as such), which changes nothing else.
set +e
for k in "${known_failures[@]}"; do echo "debian13: NOT RUN (known to fail on Debian 13): ${k%%|*}: ${k#*|}"; done
LRB_BENCH=${LRB_DEBIAN13_BENCH:-} LRB_EXCLUDE=$exclude LRB_JOBS=$jobs unshare --mount --propagation private -- bash -c '
  set -euo pipefail
  root=$1; src=$2; shift 2
  mount --rbind /dev "$root/dev"
  mount -t proc proc "$root/proc"
  mount -t sysfs sys "$root/sys"
  mount -t tmpfs tmpfs "$root/tmp"
  mount --bind "$src" "$root/src"
  mount -o remount,bind,ro "$root/src"
  # CUDA headers, when the host has them: the build compile-checks the CUDA paths against
  # LibTorch 2.6 (cmake/cuda.cmake); nothing from them is linked.
  if [ -d /usr/local/cuda/include ]; then
    mkdir -p "$root/usr/local/cuda/include"
    mount --bind /usr/local/cuda/include "$root/usr/local/cuda/include"
    mount -o remount,bind,ro "$root/usr/local/cuda/include"
  fi
  exec chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    LRB_JOBS="$LRB_JOBS" LRB_EXCLUDE="$LRB_EXCLUDE" LRB_BENCH="$LRB_BENCH" /bin/bash -c "$0" inner "$@"
' "$inner" "$root" "$src" "$@"
code=$?
set -e
echo "debian13: finished with code $code after $(( $(date +%s) - start )) s (not run: the slurm tests, and ${#known_failures[@]} known Debian 13 failures listed above)"
exit "$code"
