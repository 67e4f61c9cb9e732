#!/usr/bin/env bash
# The quickstart, an older lrbench against this build, alternating on the same machine
# (docs/benchmarks.md, "The quickstart against the main before issue 27"): old, new, new,
# old, each on one MPI rank per core of one thread, then each run's step median and accuracy
# per model. The old binary is started through mpirun, as builds before `--ranks` were.
# FALLBACK=1 reproduces a machine whose OpenBLAS falls back to its SSE3 kernels (the
# processors issue 27 was measured on): the old binary gets OPENBLAS_CORETYPE=PRESCOTT, and
# LRB_FAULT_BLAS_FALLBACK=Prescott makes this build's launcher find the fallback, self-test
# a better core and set it, as it does where the library fell back by itself.
# Usage: tests/bench/quickstart_side_by_side.sh OLD_LRBENCH [OUT]   (OUT: /tmp/lrb-side-by-side;
# SWEEP=FILE compares another sweep, RANKS=N another rank count)
# Build the old binary in a worktree: git worktree add /tmp/old REV && (cd /tmp/old &&
# bash scripts/build.sh lrbench lrbench-core); OLD_LRBENCH is then /tmp/old/build/lrbench.
set -euo pipefail
cd "$(dirname "$0")/../.."
old=$(realpath "${1:?usage: $0 OLD_LRBENCH [OUT]}")
out=${2:-/tmp/lrb-side-by-side}
ranks=${RANKS:-$(nproc)}
sweep=${SWEEP:-workloads/sweeps/quickstart.toml}
rm -rf "$out" && mkdir -p "$out"
old_env=() new_env=()
if [ "${FALLBACK:-0}" = 1 ]; then old_env=(OPENBLAS_CORETYPE=PRESCOTT) new_env=(LRB_FAULT_BLAS_FALLBACK=Prescott); fi
data_cache=${LRB_DATA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/lrbench/data}
one() { # NAME then the command; each run checks the BLAS afresh (a cache folder of its own)
  local name=$1; shift
  local start end
  start=$(date +%s.%N)
  env XDG_CACHE_HOME="$out/cache-$name" LRB_DATA_CACHE="$data_cache" "$@" > "$out/$name.log" 2>&1
  end=$(date +%s.%N)
  echo "$name: $(echo "$end - $start" | bc) s" | tee -a "$out/times.txt"
}
old_run() { one "$1" "${old_env[@]}" mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$ranks" "$old" run "$sweep" --out "$out/$1"; }
new_run() { one "$1" "${new_env[@]}" build/lrbench run "$sweep" --out "$out/$1" --ranks "$ranks"; }
old_run old1; new_run new1; new_run new2; old_run old2
# Each sweep's report: its claims' verdicts, accuracy over seeds and efficiency tables (the
# step median: the median over runs of each run's step median) into OUT/NAME.report.txt.
for name in old1 new1 new2 old2; do
  build/lrbench report "$out/$name" > "$out/$name.report.txt"
  echo "== $name"
  awk '/ — (accuracy \(|efficiency)/ { show = 1 } show && /^$/ { show = 0 } show' "$out/$name.report.txt"
done
