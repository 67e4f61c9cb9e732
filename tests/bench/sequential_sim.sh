#!/usr/bin/env bash
# The sequential design's false-verdict rate, power and expected seeds by simulation: the
# tables of docs/sequential-studies.md (and the README's part of them) are this script's output.
#   tests/bench/sequential_sim.sh [build dir] [studies per row (default 10000)] [seed]
# Under the null the "supported" rate of lrbench's sequential judge must stay at most α with
# its Clopper–Pearson interval; the naive rule (a fixed-n interval at every look, stopping
# when it clears) is shown failing that on the same simulated studies. The small version
# runs in CI (Differences/SequentialClaimsNull in tests/unit/report/sequential_claims_test.cpp).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
sim=$build/tests/lrb_sequential_sim
[ -x "$sim" ] || { echo "sequential_sim: build $sim first (cmake --build $build --target lrb_sequential_sim)" >&2; exit 2; }
echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
/usr/bin/time -f 'wall %e s' "$sim" "${2:-10000}" "${3:-20261202}"
