#!/usr/bin/env bash
# The libFuzzer targets of tests/fuzz (*_fuzz.cpp), built with clang, AddressSanitizer and
# UndefinedBehaviorSanitizer in build-fuzz/.
#   scripts/fuzz.sh SECONDS   fuzz each target for SECONDS, growing build-fuzz/corpus/<target>;
#                             crashing inputs land in build-fuzz/crashes/<target>/
#   scripts/fuzz.sh 0         the regression form (CI): each target once over its seed
#                             corpus and its saved crash inputs, tests/fuzz/regressions/<target>/
# What the targets found, and what was fixed: tests/fuzz/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:?usage: scripts/fuzz.sh SECONDS (0: the regression form)}
case $seconds in *[!0-9]*) echo "fuzz: SECONDS must be a whole number, not '$seconds'" >&2; exit 2 ;; esac
targets=()
for src in tests/fuzz/*_fuzz.cpp; do targets+=("$(basename "$src" .cpp)"); done
if [ ! -f build-fuzz/CMakeCache.txt ]; then
  cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang \
    -DLRB_FUZZ=ON -DLRB_BUILD_TESTS=OFF -DLRB_BUILD_BENCHMARKS=OFF >/dev/null
fi
cmake --build build-fuzz -j "${LRB_JOBS:-$(nproc)}" --target "${targets[@]}"
export LSAN_OPTIONS=suppressions=$PWD/tests/fuzz/lsan.supp
export UBSAN_OPTIONS=print_stacktrace=1
# The seed corpus of a target: tests/fuzz/corpus/<target without _fuzz and _resealed>/.
corpus_of() { local t=${1%_fuzz}; echo "tests/fuzz/corpus/${t%_resealed}"; }
status=0
for t in "${targets[@]}"; do
  bin=build-fuzz/tests/fuzz/$t
  seeds=$(corpus_of "$t")
  regressions=tests/fuzz/regressions/$t
  if [ "$seconds" = 0 ]; then
    inputs=("$seeds")
    [ -d "$regressions" ] && inputs+=("$regressions")
    if "$bin" -runs=0 "${inputs[@]}" >"build-fuzz/$t.log" 2>&1; then
      echo "fuzz: $t: $(find "${inputs[@]}" -type f | wc -l) inputs, no crash"
    else
      echo "fuzz: $t: FAILED (build-fuzz/$t.log):"; tail -30 "build-fuzz/$t.log"; status=1
    fi
    continue
  fi
  mkdir -p "build-fuzz/corpus/$t" "build-fuzz/crashes/$t"
  flags=(-max_total_time="$seconds" -max_len=65536 -timeout=20 -print_final_stats=1 -artifact_prefix="build-fuzz/crashes/$t/")
  # A target's dictionary, where it has one: tests/fuzz/<seed folder name>.dict.
  dict="tests/fuzz/$(basename "$seeds").dict"
  [ -f "$dict" ] && flags+=(-dict="$dict")
  # Targets that hand a user's unsealed HDF5 file to libhdf5 meet its known crashes on
  # crafted metadata (tests/fuzz/README.md): keep fuzzing past them, each saved in crashes/.
  case $t in hdf5_data_fuzz | attend_input_fuzz) flags+=(-fork=1 -ignore_crashes=1) ;; esac
  "$bin" "${flags[@]}" "build-fuzz/corpus/$t" "$seeds" >"build-fuzz/$t.log" 2>&1 || status=1
  # Executions: libFuzzer's final statistics, or (with -fork) its last progress line "#N: ...".
  execs=$(grep -E 'stat::number_of_executed_units' "build-fuzz/$t.log" | tail -1 | grep -oE '[0-9]+' | head -1 || true)
  [ -n "$execs" ] || execs=$(grep -oE '^#[0-9]+' "build-fuzz/$t.log" | tail -1 | tr -d '#' || true)
  echo "fuzz: $t: ${seconds} s, ${execs:-?} executions, $(ls "build-fuzz/crashes/$t" | wc -l) crashing input(s) in build-fuzz/crashes/$t/"
done
exit "$status"
