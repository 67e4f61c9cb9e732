#!/usr/bin/env bash
# Configures and builds lrbench into build/ (Release, Ninja, ccache). Extra arguments go to
# the build tool, e.g. scripts/build.sh lrbench
# With CI=true (.ci/run), compiler warnings in lrbench's own code are errors (LRB_WERROR).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${LRB_JOBS:-$(nproc)}
options=()
if [ "${CI:-}" = true ]; then options+=(-DLRB_WERROR=ON); fi
if [ ! -f build/CMakeCache.txt ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "${options[@]}"
elif [ "${#options[@]}" -gt 0 ]; then
  cmake -S . -B build "${options[@]}"
fi
cmake --build build -j "$jobs" ${1:+--target "$@"}
