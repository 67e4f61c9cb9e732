#!/usr/bin/env bash
# The CI's results check (docs/comparing-builds.md, "In CI"): this build runs
# workloads/sweeps/ci-check.toml (the quickstart's models, a minute on 2 cores), and its runs
# are compared with the last passing build's, kept in the CI's cache, by `lrbench compare
# --fail-on moved`: on a CPU every figure not read off a clock is the same bit for bit from
# one build to the next. One that moved fails the check, unless a commit since the baseline's
# revision says why in a line of its message:
#     Moves-results: the attention kernel now sums in another order (accuracy ±1e-7)
# A passing check becomes the next baseline. The first run (an empty cache) only records it,
# and so does a run on another machine or libraries than the baseline's (its bits differ).
# Usage: scripts/results_check.sh [BUILD]     (BUILD: build)
# LRB_RESULTS_BASELINE: the baseline's folder (default /var/cache/lrbench/results-check);
# LRB_RESULTS_NEW: a results folder of this build already run (skips the sweep), and
# LRB_RESULTS_REPO: the git work tree whose commits may explain a move (default: this one),
# for tests.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
baseline=${LRB_RESULTS_BASELINE:-/var/cache/lrbench/results-check}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
new=${LRB_RESULTS_NEW:-}
if [ -z "$new" ]; then
  new=$work/new
  "$build/lrbench" run workloads/sweeps/ci-check.toml --out "$new" --ranks auto > "$work/run.log" 2>&1 ||
    { cat "$work/run.log"; echo "results check: the sweep failed" >&2; exit 1; }
fi
repo=${LRB_RESULTS_REPO:-$PWD}
git_() { git -C "$repo" "$@"; }
revision=$(git_ rev-parse HEAD 2>/dev/null || echo unknown)
store() {  # the new results become the baseline, replaced whole
  mkdir -p "$(dirname "$baseline")"
  rm -rf "$baseline.tmp"
  cp -r "$new" "$baseline.tmp"
  echo "$revision" > "$baseline.tmp/REVISION"
  rm -rf "$baseline"
  mv "$baseline.tmp" "$baseline"
}
if [ ! -d "$baseline/runs" ]; then
  store
  echo "results check: no baseline yet; this build's results ($revision) are the baseline from now on"
  exit 0
fi
base_revision=$(cat "$baseline/REVISION" 2>/dev/null || echo unknown)
status=0
"$build/lrbench" compare "$baseline" "$new" --fail-on moved -o "$work/compare.json" || status=$?
if [ "$status" = 0 ]; then
  store
  echo "results check: every figure not read off a clock is identical to $base_revision's"
  exit 0
fi
if [ "$status" != 5 ]; then
  echo "results check: lrbench compare exited $status" >&2
  exit 1
fi
# Bits move with the machine and its libraries (another processor picks another BLAS core):
# a baseline from another machine says nothing about this change. Recorded anew.
other_machine=$(python3 - "$work/compare.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
machine = {"cpu", "gpu", "blas", "blas_core", "openblas_coretype", "torch_version", "threads", "mpi_library", "hdf5_version"}
print(", ".join(f"{d['what']} {'/'.join(d['before'])} -> {'/'.join(d['after'])}" for d in c["provenance"] if d["what"] in machine))
PY
)
if [ -n "$other_machine" ]; then
  store
  echo "results check: the baseline ($base_revision) ran on another machine or libraries ($other_machine);"
  echo "this build's results are the baseline from now on"
  exit 0
fi
# Moved: explained by a commit since the baseline (or by HEAD, when the baseline's revision
# is not in this clone's history)?
if git_ cat-file -e "$base_revision^{commit}" 2>/dev/null && git_ merge-base --is-ancestor "$base_revision" HEAD 2>/dev/null; then
  range="$base_revision..HEAD"
else
  range="-1 HEAD"
fi
# shellcheck disable=SC2086
why=$(git_ log --format=%B $range 2>/dev/null | grep -E '^Moves-results:' || true)
python3 - "$work/compare.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
moved = [x for x in c["changes"] if x["kind"] != "time" and x["change"] != "identical"]
for x in moved[:40]:
    print(f"  {x['task']} {x['entrant']} {x['figure']}: {x['before_mean']!r} -> {x['after_mean']!r} ({x['change']}: {x['why']})")
if len(moved) > 40:
    print(f"  ... and {len(moved) - 40} more")
PY
if [ -n "$why" ]; then
  store
  echo "results check: figures moved since $base_revision, as the commits say:"
  echo "$why"
  exit 0
fi
echo "results check: figures moved since $base_revision (above; the whole comparison: lrbench compare), and no commit" >&2
echo "since says why. If the change is meant to move them, say so in its commit message:" >&2
echo "    Moves-results: <what moved and why>" >&2
exit 1
