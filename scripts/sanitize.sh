#!/usr/bin/env bash
# lrbench's tests built with sanitizers (a finding fails the run, with its stack):
#   scripts/sanitize.sh fast   AddressSanitizer + UndefinedBehaviorSanitizer on the tests of
#                              the torch-free layers (lrb_torch_free_tests, build-asan/):
#                              minutes on 2 cores; CI runs this form
#   scripts/sanitize.sh asan   the same sanitizers on all of lrbench (the lrbench program
#                              too, under the tests that run it) and its unit, slow and mpi
#                              tests: about an hour to build on 2 cores
#   scripts/sanitize.sh tsan   ThreadSanitizer on the threaded parts, build-tsan/: the
#                              torch-free layers' tests, among them the report's parallel
#                              bootstraps and ranking (parallel_for, the ranking's drawing
#                              thread), the file cache shared by threads, signal handling
#                              (the stop flag); and the work queue's service thread with
#                              the progress board under mpirun (lrb_work_queue_check)
#   scripts/sanitize.sh        all three
# The suppression files, each entry with its reason: tests/sanitize/.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
case $what in fast | asan | tsan | all) ;; *) echo "sanitize: unknown form '$what' (fast, asan, tsan, or none for all)" >&2; exit 2 ;; esac
./scripts/setup.sh
jobs=${LRB_JOBS:-$(nproc)}
supp=$PWD/tests/sanitize
# Leaks are looked for in the torch-free tests; lrbench itself exits through LibTorch and
# Open MPI, whose process-lifetime allocations are not lrbench's to free (asan form).
asan_env=(ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1
          LSAN_OPTIONS=suppressions=$supp/lsan.supp
          UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:suppressions=$supp/ubsan.supp)
tsan_env=(TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=$supp/tsan.supp)
# The torch-free program's tests are known to ctest in these builds, labelled torch-free
# (tests/CMakeLists.txt: the tests/unit folders of the torch-free layers); those that run
# the lrbench program, which these builds do not make, are labelled program too and run in
# the asan form.
torch_free_labels=(-L torch-free -LE program)
mpirun_args=(mpirun --allow-run-as-root --oversubscribe --bind-to none)
status=0

# Warnings are not errors here: with -fsanitize, GCC 12 warns of maybe-uninitialized
# members inside libstdc++'s <regex> (a known false positive); the release build's
# -Werror (CI) holds lrbench's own code to no warning.
configure() {  # configure <preset>
  [ -f "build-$1/CMakeCache.txt" ] || cmake --preset "$1" >/dev/null
}

fast() {
  configure asan
  cmake --build build-asan -j "$jobs" --target lrb_torch_free_tests
  echo "sanitize: ASan+UBSan, the torch-free layers' tests"
  (cd build-asan && env "${asan_env[@]}" ctest --output-on-failure --no-tests=error --timeout 600 -j "$jobs" "${torch_free_labels[@]}") || status=1
}

full_asan() {
  configure asan
  cmake --build build-asan -j "$jobs"
  echo "sanitize: ASan+UBSan, all of lrbench: unit, slow and mpi tests"
  (cd build-asan && env "${asan_env[@]}" ASAN_OPTIONS=detect_leaks=0:detect_stack_use_after_return=1 \
    ctest --output-on-failure --timeout 3600 -j "$jobs" -L 'unit|slow|mpi' -LE torch-free) || status=1
}

tsan() {
  configure tsan
  cmake --build build-tsan -j "$jobs" --target lrb_torch_free_tests lrb_work_queue_check
  echo "sanitize: TSan, the threaded parts"
  (cd build-tsan && env "${tsan_env[@]}" ctest --output-on-failure --no-tests=error --timeout 600 -j "$jobs" "${torch_free_labels[@]}") || status=1
  for args in "4 400" "4 400 7" "2 50"; do
    set -- $args
    env "${tsan_env[@]}" "${mpirun_args[@]}" -x TSAN_OPTIONS -np "$1" build-tsan/tests/lrb_work_queue_check "${@:2}" || status=1
  done
}

case $what in
  fast) fast ;;
  asan) full_asan ;;
  tsan) tsan ;;
  all) fast; full_asan; tsan ;;
esac
[ "$status" = 0 ] && echo "sanitize: $what: no finding" || echo "sanitize: $what: FAILED (the finding is above)" >&2
exit "$status"
