#!/usr/bin/env bash
# Random fault trials (tests/faults/fault_trials_test.cpp): N trials on a small 2-rank sweep,
# each disturbed once (a rank killed, a stop signal, a full disk, a damaged run file) and
# run again, then checked against an undisturbed reference. Prints the counts; the summary
# with every problem found goes to build/fault-trials.md. CI runs the short form (4 trials,
# one of each kind) with the other tests (label faults).
# Usage: tests/faults/run.sh [TRIALS] [SEED]      (default 100 trials, seed from the clock)
set -euo pipefail
cd "$(dirname "$0")/../.."
trials=${1:-100}
[ -x build/tests/lrb_tests ] || ./scripts/build.sh
export LRB_FAULT_TRIALS=$trials LRB_FAULT_SUMMARY=$PWD/build/fault-trials.md
[ -n "${2:-}" ] && export LRB_FAULT_SEED=$2
build/tests/lrb_tests --gtest_filter='FaultTrials*' | grep -E '^(fault trials|trial [0-9]+:|[0-9]+ trials)|Failure|FAILED|PASSED'
