#!/usr/bin/env bash
# The quickstart under OpenBLAS's SSE3 fallback against the core the launcher chooses, on the
# same machine through `lrbench ab` (docs/benchmarks.md, "The BLAS core"; the worked example
# of docs/comparing-builds.md): this build as both sides, cell by cell in turn, then
# `lrbench compare` of the two. On a processor OpenBLAS knows, the fallback is forced with
# OPENBLAS_CORETYPE=PRESCOTT, and LRB_FAULT_BLAS_FALLBACK=Prescott makes the launcher's check
# report it, so the launcher tests and sets the better core as it would where the library
# fell back by itself. Each side is a wrapper program setting its variable.
# Usage: tests/bench/blas_core_quickstart.sh [OUT]   (default /tmp/lrb-blas-quickstart)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-/tmp/lrb-blas-quickstart}
rm -rf "$out" && mkdir -p "$out"
# A cache folder of its own (so the verdict is checked afresh); the task data from the usual one.
export XDG_CACHE_HOME="$out/cache" LRB_DATA_CACHE="${LRB_DATA_CACHE:-$HOME/.cache/lrbench/data}"
printf '#!/bin/sh\nOPENBLAS_CORETYPE=PRESCOTT exec "%s" "$@"\n' "$PWD/build/lrbench" > "$out/fallback"
printf '#!/bin/sh\nLRB_FAULT_BLAS_FALLBACK=Prescott exec "%s" "$@"\n' "$PWD/build/lrbench" > "$out/chosen"
chmod +x "$out/fallback" "$out/chosen"
build/lrbench ab workloads/sweeps/quickstart.toml --baseline "$out/fallback" --candidate "$out/chosen" --out "$out/ab" \
  --ranks 2 --threads 1 -o "$out/compare.md"
build/lrbench compare "$out/ab/baseline" "$out/ab/candidate"
