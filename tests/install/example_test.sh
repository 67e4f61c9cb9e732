#!/usr/bin/env bash
# The out-of-tree example against the installed lrbench (examples/custom_model): install the
# build into a prefix, configure and build the example against it with find_package(lrbench),
# then check that its program lists the example's model beside the built-in ones, runs a
# sweep with it, writes the run files, and reports the model.
#   tests/install/example_test.sh <lrbench build dir> <lrbench source dir>
# Works under <build>/install-test/ (kept when the test fails, for a look; under /work, so
# ccache's base_dir makes a second run's compile a cache hit).
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
work=$build/install-test
rm -rf "$work"
mkdir -p "$work"
step() { echo "example_test: $*"; }
fail() { echo "example_test: FAILED: $*" >&2; exit 1; }

step "installing $build into $work/prefix"
cmake --install "$build" --prefix "$work/prefix" >"$work/install.log" || { cat "$work/install.log"; fail "cmake --install"; }
for f in bin/lrbench bin/lrbench-core bin/lrbench-results lib/cmake/lrbench/lrbenchConfig.cmake lib/cmake/lrbench/lrbenchConfigVersion.cmake \
         include/suite/contracts/model.h include/suite/registry/registry.h; do
  [ -e "$work/prefix/$f" ] || fail "the install has no $f"
done

step "configuring and building examples/custom_model against it"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$src/examples/custom_model" -B "$work/example" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$work/prefix" "${launcher[@]}"
cmake --build "$work/example"
lrbench=$work/example/custom-lrbench/lrbench
[ -x "$lrbench" ] && [ -x "$work/example/custom-lrbench/lrbench-core" ] || fail "no lrbench and lrbench-core in $work/example/custom-lrbench"

step "lrbench list models"
"$lrbench" list models >"$work/models.txt"
grep -q '^  relu-former — ' "$work/models.txt" || { cat "$work/models.txt"; fail "relu-former is not listed"; }
grep -q '^  transformer — ' "$work/models.txt" || { cat "$work/models.txt"; fail "the built-in models are not listed"; }
"$lrbench" list tasks >"$work/tasks.txt"
grep -q '^  listops — ' "$work/tasks.txt" || { cat "$work/tasks.txt"; fail "the built-in tasks are not listed"; }

step "lrbench run examples/custom_model/sweep.toml (1 rank)"
sweep=$src/examples/custom_model/sweep.toml
"$lrbench" validate "$sweep"
"$lrbench" run "$sweep" --out "$work/results"
runs=$(find "$work/results/runs" -name '*.h5' | wc -l)
[ "$runs" -eq 2 ] || { find "$work/results"; fail "expected 2 run files, found $runs"; }

step "lrbench report"
"$lrbench" report "$work/results" >"$work/report.txt"
grep -q 'relu-former' "$work/report.txt" || { cat "$work/report.txt"; fail "the report does not show relu-former"; }
grep -q 'transformer' "$work/report.txt" || { cat "$work/report.txt"; fail "the report does not show the transformer"; }
cat "$work/report.txt"
rm -rf "$work"
step "ok"
