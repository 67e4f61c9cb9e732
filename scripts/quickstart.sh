#!/usr/bin/env bash
# Sets up, builds, runs the quickstart sweep on one local MPI rank per core (`--ranks auto`:
# the fastest layout measured, docs/benchmarks.md "Thread layout") and prints its report:
# the claims' verdicts, then MAELRE against each baseline.
# Results go to quickstart-results/ (run it again: finished runs are kept, nothing reruns).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh lrbench
out=${LRB_QUICKSTART_OUT:-quickstart-results}
set +e
build/lrbench run workloads/sweeps/quickstart.toml --out "$out" --ranks auto
code=$?
set -e
# 4 = finished with failed runs: the table shows them, so print it anyway.
if [ "$code" -ne 0 ] && [ "$code" -ne 4 ]; then exit "$code"; fi
# MAELRE against each baseline: the claims first, then paired comparisons with MAELRE.
build/lrbench report "$out" --baseline maelre
exit "$code"
