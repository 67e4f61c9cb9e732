#!/usr/bin/env bash
# The quickstart under OpenBLAS's SSE3 fallback and under the core the launcher chooses,
# one after the other on the same machine (docs/benchmarks.md, "The BLAS core"). On a
# processor OpenBLAS knows, the fallback is forced with OPENBLAS_CORETYPE=PRESCOTT, and
# LRB_FAULT_BLAS_FALLBACK=Prescott makes the launcher's check report it, so the launcher
# tests and sets the better core as it would where the library fell back by itself.
# Usage: tests/bench/blas_core_quickstart.sh [OUT]   (default /tmp/lrb-blas-quickstart)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-/tmp/lrb-blas-quickstart}
rm -rf "$out" && mkdir -p "$out"
# A cache folder of its own (so the verdict is checked afresh); the task data from the usual one.
export XDG_CACHE_HOME="$out/cache" LRB_DATA_CACHE="${LRB_DATA_CACHE:-$HOME/.cache/lrbench/data}"
for mode in fallback chosen; do
  if [ "$mode" = fallback ]; then setting=OPENBLAS_CORETYPE=PRESCOTT; else setting=LRB_FAULT_BLAS_FALLBACK=Prescott; fi
  start=$(date +%s.%N)
  env "$setting" mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 \
    build/lrbench run workloads/sweeps/quickstart.toml --out "$out/$mode" > "$out/$mode.log" 2>&1
  end=$(date +%s.%N)
  echo "$mode: $(echo "$end - $start" | bc) s"
  build/lrbench report "$out/$mode" > "$out/$mode.report.txt"
  grep -A8 "efficiency" "$out/$mode.report.txt" | head -10
done
