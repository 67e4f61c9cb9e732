#!/usr/bin/env bash
# Data parallelism on this machine: the quickstart's models trained by a group of 2 ranks
# (1 thread each) and, for comparison, by 1 rank with 2 threads, same global batch.
# Prints each model's median step time both ways and the gradient exchange's median time
# and share of a step (from the runs' allreduce_seconds_median and allreduce_share).
# Usage: tests/bench/data_parallel.sh [build dir]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
spec=workloads/sweeps/bench/data-parallel.toml
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mpi=(mpirun --allow-run-as-root --oversubscribe --bind-to none)
sed -e '/^ranks_per_run = 2$/d' -e 's/^name = "data-parallel"$/name = "data-parallel-one-rank"/' "$spec" > "$tmp/one.toml"
"${mpi[@]}" -np 2 "$build/lrbench" run "$spec" --out "$tmp/two" > "$tmp/two.log" 2>&1 || { cat "$tmp/two.log"; exit 1; }
"${mpi[@]}" -np 1 "$build/lrbench" run "$tmp/one.toml" --out "$tmp/one" --threads 2 > "$tmp/one.log" 2>&1 || { cat "$tmp/one.log"; exit 1; }
"$build/lrbench" report "$tmp/two" --format csv -o "$tmp/two.csv" > /dev/null
"$build/lrbench" report "$tmp/one" --format csv -o "$tmp/one.csv" > /dev/null
# The CSV's cell rows hold the efficiency figures (medians over the runs) by name.
python3 - "$tmp/one.csv" "$tmp/two.csv" <<'PY'
import csv, sys
def rows(path):
    out = {}
    for r in csv.DictReader(open(path)):
        if r["kind"] == "cell" and r["model"]:
            out.setdefault(r["model"], {}).update({k: v for k, v in r.items() if v})
    return out
one, two = rows(sys.argv[1]), rows(sys.argv[2])
print("| model | params | step, 1 rank × 2 threads | step, 2 ranks × 1 thread | exchange | exchange share |")
print("| --- | --- | --- | --- | --- | --- |")
for m in two:
    a, b = one.get(m, {}), two[m]
    f = lambda d, k, s=1e3, u=" ms": (f"{float(d[k]) * s:.1f}{u}" if k in d else "—")
    params = f"{float(b['params']) / 1e6:.2f} M" if "params" in b else "—"
    print(f"| {m} | {params} | {f(a, 'step_seconds_median')} | {f(b, 'step_seconds_median')} | {f(b, 'allreduce_seconds_median', 1e3)} | {f(b, 'allreduce_share', 100, ' %')} |")
PY
