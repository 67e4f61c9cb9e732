#!/usr/bin/env bash
# Which layout of this machine's cores runs a sweep's runs fastest: ranks x threads per rank.
# Runs the quickstart's 15 runs, shortened to STEPS steps, once per layout R x T with
# R * T = the cores lrbench may use (1 x C, ..., C x 1), each into a fresh results folder,
# and then as `lrbench run --ranks auto` chooses, and prints wall time, CPU time and runs per
# hour per layout, as a Markdown table.
#   tests/bench/thread_layouts.sh [STEPS]     (default 100; build/lrbench must be built)
# Numbers in docs/benchmarks.md, "Thread layout". Run it on an idle machine: the layouts
# are measured one after another, so load from anything else shifts the ratios.
set -euo pipefail
cd "$(dirname "$0")/../.."
steps=${1:-100}
case "$steps" in ''|*[!0-9]*) echo "thread_layouts.sh: STEPS must be a number of steps, not '$steps'" >&2; exit 2 ;; esac
[ -x build/lrbench ] || { echo "thread_layouts.sh: build/lrbench is missing: run scripts/build.sh lrbench" >&2; exit 1; }
cores=$(nproc)
work=$(mktemp -d "${TMPDIR:-/tmp}/lrb-layouts.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The quickstart with fewer steps (warm-up and evaluation scaled with them), nothing else changed.
warmup=$(( steps / 10 > 0 ? steps / 10 : 1 ))
sed -e "s/^steps = .*/steps = $steps/" -e "s/^warmup_steps = .*/warmup_steps = $warmup/" \
    -e "s/^eval_every = .*/eval_every = $steps/" workloads/sweeps/quickstart.toml > "$work/layouts.toml"
grep -q "^steps = $steps\$" "$work/layouts.toml" || { echo "thread_layouts.sh: cannot set steps in the quickstart's sweep" >&2; exit 1; }

# Fill the task's data cache first (a few of the runs: every run reads the same data), so
# that no layout pays for it.
build/lrbench run "$work/layouts.toml" --out "$work/warm" --shard 0/8 >/dev/null 2>"$work/log" ||
  { echo "thread_layouts.sh: the warm-up runs failed:" >&2; tail -5 "$work/log" >&2; exit 1; }

root=(); [ "$(id -u)" -eq 0 ] && root=(--allow-run-as-root)
echo "| layout (ranks x threads) | wall (s) | CPU (s) | runs | runs per hour | vs 1 x $cores |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
base=""
row() {  # row LAYOUT OUT: the table's line for the sweep just timed into OUT
  local wall user sys runs
  read -r wall user sys < "$work/time"
  runs=$(find "$2/runs" -name '*.h5' | wc -l)
  [ -z "$base" ] && base=$wall
  awk -v l="$1" -v w="$wall" -v u="$user" -v s="$sys" -v n="$runs" -v b="$base" \
    'BEGIN { printf "| %s | %.0f | %.0f | %d | %.0f | %.2fx |\n", l, w, u + s, n, n * 3600 / w, b / w }'
}
fail() { echo "thread_layouts.sh: the $1 layout failed:" >&2; tail -5 "$work/log" >&2; exit 1; }
for ((ranks = 1; ranks <= cores; ranks++)); do
  (( cores % ranks == 0 )) || continue
  threads=$(( cores / ranks ))
  /usr/bin/time -f "%e %U %S" -o "$work/time" \
    mpirun "${root[@]}" --oversubscribe --bind-to none -np "$ranks" \
    build/lrbench run "$work/layouts.toml" --out "$work/r$ranks" --threads "$threads" >/dev/null 2>"$work/log" ||
    fail "$ranks x $threads"
  row "$ranks x $threads" "$work/r$ranks"
done
/usr/bin/time -f "%e %U %S" -o "$work/time" \
  build/lrbench run "$work/layouts.toml" --out "$work/auto" --ranks auto >/dev/null 2>"$work/log" || fail "--ranks auto"
row "--ranks auto: $(sed -n 's/.*--ranks auto: \([0-9]*\) rank(s) x \([0-9]*\) thread(s).*/\1 x \2/p' "$work/log")" "$work/auto"
echo
echo "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $cores cores; the quickstart at $steps steps"
