#!/usr/bin/env bash
# Configures and builds lrbench into build/ (Release, Ninja, ccache). Extra arguments go to
# the build tool, e.g. scripts/build.sh lrbench
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${LRB_JOBS:-$(nproc)}
if [ ! -f build/CMakeCache.txt ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
fi
cmake --build build -j "$jobs" ${1:+--target "$@"}
