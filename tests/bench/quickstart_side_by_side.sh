#!/usr/bin/env bash
# The quickstart, another lrbench build against this one on the same machine, through
# `lrbench ab` (docs/comparing-builds.md): the two builds alternate cell by cell (A B, then
# B A), each cell's runs on one MPI rank per core of one thread, then `lrbench compare` of
# the two sides into OUT/compare.md (and on the terminal): each figure identical,
# unchanged, improved, regressed or inconclusive, step times as ratios with their interval.
# FALLBACK=1 reproduces a machine whose OpenBLAS falls back to its SSE3 kernels (the
# processors issue 27 was measured on): the other build gets OPENBLAS_CORETYPE=PRESCOTT, and
# LRB_FAULT_BLAS_FALLBACK=Prescott makes this build's launcher find the fallback, self-test
# a better core and set it, as it does where the library fell back by itself.
# Usage: tests/bench/quickstart_side_by_side.sh OTHER_LRBENCH [OUT]   (OUT: /tmp/lrb-side-by-side;
# SWEEP=FILE compares another sweep, RANKS=N another rank count)
# Build the other binary in a worktree: git worktree add /tmp/old REV && (cd /tmp/old &&
# bash scripts/build.sh lrbench lrbench-core); OTHER_LRBENCH is then /tmp/old/build/lrbench.
# It must have `run --only` (builds from `lrbench ab` on); for older ones, the manual
# procedure this script used before is in its git history (results/benchmarks/
# quickstart-side-by-side-2026-12-06.md was measured with it).
set -euo pipefail
cd "$(dirname "$0")/../.."
other=$(realpath "${1:?usage: $0 OTHER_LRBENCH [OUT]}")
out=${2:-/tmp/lrb-side-by-side}
ranks=${RANKS:-$(nproc)}
sweep=${SWEEP:-workloads/sweeps/quickstart.toml}
rm -rf "$out" && mkdir -p "$out"
baseline=$other candidate=$PWD/build/lrbench
if [ "${FALLBACK:-0}" = 1 ]; then
  # Each build in the environment of its own machine: a wrapper program per side.
  printf '#!/bin/sh\nOPENBLAS_CORETYPE=PRESCOTT exec "%s" "$@"\n' "$other" > "$out/baseline"
  printf '#!/bin/sh\nLRB_FAULT_BLAS_FALLBACK=Prescott exec "%s" "$@"\n' "$PWD/build/lrbench" > "$out/candidate"
  chmod +x "$out/baseline" "$out/candidate"
  baseline=$out/baseline candidate=$out/candidate
fi
build/lrbench ab "$sweep" --baseline "$baseline" --candidate "$candidate" --out "$out/ab" --ranks "$ranks" --threads 1 \
  -o "$out/compare.md"
build/lrbench compare "$out/ab/baseline" "$out/ab/candidate"
