#!/usr/bin/env bash
# The kernel and model tests (tests/unit/nn/, baselines/, workloads/maelre/: the kernels, their
# fast paths, the models built on them) once more at the baseline SIMD level
# (LRB_SIMD_LEVEL=baseline, suite/core/simd_level.h): the tests that loop over the levels
# already cover each copy, this runs the rest on the baseline copies, as a CPU without AVX2
# would. About 5 s.
# Usage: scripts/kernel_tests_at_baseline.sh [BUILD]     (BUILD: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
# Their test suites: TEST(Suite, ...), TEST_F(Suite, ...) and TEST_P(Suite,
# ...), whose instances gtest names Prefix/Suite.
suites=$(grep -ohE '^TEST(_F|_P)?\([A-Za-z0-9_]+' tests/unit/nn/*.cpp tests/unit/baselines/*.cpp tests/unit/workloads/maelre/*.cpp | sed -E 's/^TEST(_F|_P)?\(//' | sort -u)
[ -n "$suites" ] || { echo "kernel tests at baseline: no test suites found" >&2; exit 1; }
filter=$(for s in $suites; do printf '%s.*:*/%s.*:' "$s" "$s"; done)
LRB_SIMD_LEVEL=baseline "$build/tests/lrb_tests" --gtest_brief=1 --gtest_filter="${filter%:}"
