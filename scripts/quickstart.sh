#!/usr/bin/env bash
# Sets up, builds, runs the quickstart sweep on 2 local MPI ranks and prints its report:
# the claims' verdicts, then MAELRE against each baseline.
# Results go to quickstart-results/ (run it again: finished runs are kept, nothing reruns).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh lrbench
out=${LRB_QUICKSTART_OUT:-quickstart-results}
set +e
mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 \
  build/lrbench run workloads/sweeps/quickstart.toml --out "$out"
code=$?
set -e
# 4 = finished with failed runs: the table shows them, so print it anyway.
if [ "$code" -ne 0 ] && [ "$code" -ne 4 ]; then exit "$code"; fi
# MAELRE against each baseline: the claims first, then paired comparisons with MAELRE.
build/lrbench report "$out" --baseline maelre
exit "$code"
