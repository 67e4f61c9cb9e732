#!/usr/bin/env bash
# Sweep throughput: the same 8 equal runs (1 thread each) on 1 rank and on 2 ranks.
# Prints both wall times and the speed-up (target >= 1.8x on a 2-core machine).
# Usage: tests/bench/sweep_scaling.sh [build dir]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
spec=workloads/sweeps/bench/sweep-scaling.toml
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mpi=(mpirun --allow-run-as-root --oversubscribe --bind-to none)
time_sweep() {
  local ranks=$1 out=$2
  local t0 t1
  t0=$(date +%s.%N)
  "${mpi[@]}" -np "$ranks" "$build/lrbench" run "$spec" --out "$out" > "$out.log" 2>&1
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }' 
}
one=$(time_sweep 1 "$tmp/one")
two=$(time_sweep 2 "$tmp/two")
awk -v a="$one" -v b="$two" 'BEGIN { printf "1 rank : %.1f s\n2 ranks: %.1f s\nspeed-up: %.2fx\n", a, b, a / b }' 
