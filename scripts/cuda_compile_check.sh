#!/usr/bin/env bash
# Compiles every CUDA and NCCL source of lrbench against Debian 13's CUDA packages — no GPU,
# nothing linked or run: LibTorch 2.6 built with CUDA (libtorch-cuda-dev, contrib), CUDA 12.4
# (nvidia-cuda-toolkit: nvcc and the headers, non-free) and NCCL 2.22 (libnccl-dev,
# non-free). Configures a build with -DLRB_WITH_CUDA=ON -DLRB_WITH_NCCL=ON against them and
# compiles, with warnings as errors, exactly the translation units that have CUDA or NCCL
# code: scripts/cuda_sources.py derives that list from the build's compile_commands.json and
# fails when a file with such code is compiled by none of them. Run as root (mmdebstrap,
# chroot, mounts). CI runs it after scripts/test_debian13.sh.
#
# The root lives in $LRB_CUDA_ROOT (/var/cache/lrbench/debian13-cuda-root) and is made again
# only when the package list below changes. In it:
#  - the toolchain and lrbench's build dependencies, and nvidia-cuda-toolkit and libnccl-dev,
#    installed by apt (without their large static libraries, which compiling never reads);
#  - libtorch-cuda-dev and libtorch-cuda-2.6 UNPACKED (dpkg -x, no maintainer scripts) into
#    /opt/libtorch-cuda: installing them would pull nvidia-cudnn, whose installer downloads
#    cuDNN from NVIDIA. Their CMake files find their libraries relative to themselves.
# nvcc 12.4 takes GCC 13 at most: Caffe2's CMake files test nvcc, with g++-13 as its host
# compiler; lrbench's own sources compile with the root's GCC 14.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD

# shellcheck source=scripts/lib/debian_root.sh
. scripts/lib/debian_root.sh
require_root_tools cuda_compile_check.sh

root=${LRB_CUDA_ROOT:-/var/cache/lrbench/debian13-cuda-root}
jobs=${LRB_JOBS:-$(nproc)}
packages=(
  g++ g++-13 cmake ninja-build ccache pkg-config python3
  libopenmpi-dev libhdf5-dev libgtest-dev libgmock-dev libbenchmark-dev libtomlplusplus-dev libcli11-dev
  nlohmann-json3-dev libfmt-dev libboost-dev libssl-dev zlib1g-dev
  # what libtorch-cuda-dev's CMake files look for (its Depends, but for the library itself)
  libprotobuf-dev python3-dev
  # CUDA 12.4 (nvcc, headers, libraries) and NCCL
  nvidia-cuda-toolkit libnccl-dev
)
unpacked=(libtorch-cuda-dev libtorch-cuda-2.6)
list=$(IFS=,; echo "${packages[*]}")
stamp="$list;${unpacked[*]}"
start=$(date +%s)

if [ -f "$root/.lrb-packages" ] && [ "$(cat "$root/.lrb-packages")" = "$stamp" ]; then
  echo "cuda-check: reusing the root in $root"
else
  echo "cuda-check: making a Debian 13 root with CUDA packages in $root (downloads about 1.7 GB)"
  rm -rf "$root.tmp" "$root"
  mkdir -p "$(dirname "$root")"
  # Made aside and renamed, so an interrupted run never leaves a root that looks whole.
  # The static libraries (2.7 GB unpacked) are left out, but for the CUDA runtime's, with
  # which CMake's test of nvcc links.
  mmdebstrap --quiet --variant=apt --components=main,contrib,non-free --include="$list" \
    --dpkgopt='path-exclude=/usr/lib/x86_64-linux-gnu/*_static*.a' \
    --dpkgopt='path-include=/usr/lib/x86_64-linux-gnu/libcudart_static.a' \
    --customize-hook='mkdir -p "$1/opt/debs" "$1/opt/libtorch-cuda"' \
    --customize-hook="chroot \"\$1\" sh -c 'cd /opt/debs && apt-get download -q ${unpacked[*]} 2>&1 | grep -v ^W: || true'" \
    --customize-hook='for d in "$1"/opt/debs/*.deb; do dpkg -x "$d" "$1/opt/libtorch-cuda"; done; ls "$1"/opt/debs; rm -rf "$1/opt/debs"' \
    trixie "$root.tmp"
  for p in "${unpacked[@]}"; do
    compgen -G "$root.tmp/opt/libtorch-cuda/usr/share/doc/$p" >/dev/null ||
      { echo "cuda-check: $p was not unpacked into the root" >&2; exit 1; }
  done
  echo "$stamp" >"$root.tmp/.lrb-packages"
  mv "$root.tmp" "$root"
  echo "cuda-check: root ready after $(( $(date +%s) - start )) s ($(du -sh "$root" | cut -f1))"
fi
mkdir -p "$root/src" "$root/build" "$root/root/.ccache"

inner=$(cat <<'EOF'
set -euo pipefail
export CCACHE_DIR=/root/.ccache
torch=/opt/libtorch-cuda/usr/lib/x86_64-linux-gnu/cmake/Torch
echo "cuda-check: $(. /etc/os-release; echo "$PRETTY_NAME"), $(g++ --version | head -1), $(nvcc --version | tail -1), NCCL $(dpkg-query -W -f='${Version}' libnccl-dev), LibTorch $(zcat /opt/libtorch-cuda/usr/share/doc/libtorch-cuda-dev/changelog.Debian.gz | head -1 | cut -d' ' -f2)"
# CMAKE_PREFIX_PATH: LibTorch's CMake files look for its libraries in <prefix>/lib, Debian
# keeps them in lib/x86_64-linux-gnu, which CMake searches under a prefix path.
cmake -S /src -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release -DLRB_WERROR=ON -DLRB_WITH_CUDA=ON -DLRB_WITH_NCCL=ON \
  -DTorch_DIR="$torch" -DCMAKE_PREFIX_PATH=/opt/libtorch-cuda/usr -DCMAKE_CUDA_HOST_COMPILER=g++-13 \
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/tmp/configure.log 2>&1 || { cat /tmp/configure.log; exit 1; }
grep -E '^-- (lrbench|PyTorch: CUDA detected|Caffe2: CUDA detected)' /tmp/configure.log || true
grep -E '^(LRB_WITH_CUDA|LRB_WITH_NCCL|LRB_NCCL_LIBRARY|LRB_TORCH_CUDA_LIBRARY|CUDAToolkit_NVCC_EXECUTABLE)' /build/CMakeCache.txt
# The translation units with CUDA or NCCL code, from the build's own list of them.
python3 /src/scripts/cuda_sources.py /build/compile_commands.json /src >/tmp/objects
echo "cuda-check: compiling $(wc -l </tmp/objects) translation units"
cd /build
# Compiled every time (ccache makes it cheap): an object left by an earlier run must never
# stand in for a source that no longer compiles.
xargs -a /tmp/objects rm -f
xargs -a /tmp/objects ninja -j "$LRB_JOBS" -k 0
EOF
)

set +e
LRB_JOBS=$jobs unshare --mount --propagation private -- bash -c '
  set -euo pipefail
  root=$1; src=$2; shift 2
  mount --rbind /dev "$root/dev"
  mount -t proc proc "$root/proc"
  mount -t tmpfs tmpfs "$root/tmp"
  mount --bind "$src" "$root/src"
  mount -o remount,bind,ro "$root/src"
  exec chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    LRB_JOBS="$LRB_JOBS" /bin/bash -c "$0"
' "$inner" "$root" "$src"
code=$?
set -e
echo "cuda-check: finished with code $code after $(( $(date +%s) - start )) s"
exit "$code"
