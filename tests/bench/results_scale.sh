#!/usr/bin/env bash
# The results side at scale: synthetic results folders of 1,000, 10,000 and 100,000 runs
# (lrb_make_results: 40 cells, seeds growing; each file as large as a quickstart run's), and
# for each: building the index (every file read), a report from the up-to-date index,
# `export` of every run as CSV rows, `status`, `merge` into sweep.h5, and an incremental refresh after 1,000 new runs. Wall
# time and peak memory (GNU time) of each command, then the log-log slope of time and
# memory against the number of runs (1 = linear). Targets at 100,000 runs: report <= 5 s
# and <= 1 GiB, status <= 2 s, refresh after 1,000 new runs <= 5 s, merge <= 60 s.
# Usage: tests/bench/results_scale.sh [build dir] [work dir] [sizes...]
#   The work dir needs about 3 GiB per 100,000 runs; folders already there are reused.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
work=${2:-$(mktemp -d)}
shift $(( $# > 2 ? 2 : $# ))
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000 10000 100000)
lrbench=$build/lrbench
make=$build/tests/lrb_make_results
[ -x "$make" ] || { echo "results_scale: build $make first (cmake --build $build --target lrb_make_results)" >&2; exit 2; }

measure() {  # prints "seconds kib" of the command
  /usr/bin/time -f '%e %M' -o "$work/.time" "$@" > /dev/null 2> "$work/.err" || { cat "$work/.err" >&2; exit 1; }
  cat "$work/.time"
}

printf '%-8s %-28s %9s %10s\n' runs step seconds "MiB peak"
declare -A report_s report_m merge_s export_s
for n in "${sizes[@]}"; do
  dir=$work/r$n
  if [ ! -f "$dir/.complete" ]; then
    rm -rf "$dir"
    "$make" "$dir" 0 "$n"
    touch "$dir/.complete"
  fi
  rm -f "$dir/runs.index"
  # Every file read once: the page cache holds them afterwards, as on a folder in use.
  read -r s m < <(measure "$lrbench" index "$dir")
  printf '%-8s %-28s %9.2f %10.0f\n' "$n" "index, built" "$s" "$((m / 1024))"
  read -r s m < <(measure "$lrbench" report "$dir")
  report_s[$n]=$s; report_m[$n]=$m
  printf '%-8s %-28s %9.2f %10.0f\n' "$n" "report from the index" "$s" "$((m / 1024))"
  # Every run as tidy rows (CSV), in about the time of a report: the same reading.
  read -r s m < <(measure "$lrbench" export "$dir" -o "$work/export.csv")
  export_s[$n]=$s
  printf '%-8s %-28s %9.2f %10.0f\n' "$n" "export (CSV, $(($(wc -l < "$work/export.csv") - 1)) rows)" "$s" "$((m / 1024))"
  rm -f "$work/export.csv"
  read -r s m < <(measure "$lrbench" status "$dir")
  printf '%-8s %-28s %9.2f %10.0f\n' "$n" "status" "$s" "$((m / 1024))"
  read -r s m < <(measure "$lrbench" index "$dir")
  printf '%-8s %-28s %9.2f %10.0f\n' "$n" "index, up to date" "$s" "$((m / 1024))"
  # Every file read and copied into DIR/sweep.h5 (what a Slurm sweep's final job runs).
  read -r s m < <(measure "$lrbench" merge "$dir")
  merge_s[$n]=$s
  printf '%-8s %-28s %9.2f %10.0f\n' "$n" "merge into sweep.h5" "$s" "$((m / 1024))"
  rm -f "$dir/sweep.h5"
  # 1,000 new runs (seeds beyond the folder's), then the refresh; removed again afterwards.
  cp "$dir/runs.index" "$work/.index" && cp "$dir/sweep.json" "$work/.manifest"
  touch "$work/.before"
  sleep 0.01
  "$make" "$dir" "$n" 1000
  read -r s m < <(measure "$lrbench" index "$dir")
  printf '%-8s %-28s %9.2f %10.0f\n' "$n" "refresh after 1,000 new" "$s" "$((m / 1024))"
  find "$dir/runs" -newer "$work/.before" -name '*.h5' -delete
  mv "$work/.index" "$dir/runs.index" && mv "$work/.manifest" "$dir/sweep.json"
done
# Slope of log(y) against log(runs), least squares over the sizes measured.
slope() {
  local -n values=$1
  for n in "${sizes[@]}"; do echo "$n ${values[$n]}"; done |
    awk '{ x = log($1); y = log($2); sx += x; sy += y; sxx += x * x; sxy += x * y; k++ }
         END { printf "%.2f", (k * sxy - sx * sy) / (k * sxx - sx * sx) }'
}
if [ "${#sizes[@]}" -ge 2 ]; then
  echo "report from the index, log-log slope over ${sizes[*]} runs: time $(slope report_s), memory $(slope report_m)"
  echo "merge, log-log slope of time over ${sizes[*]} runs: $(slope merge_s)"
  echo "export, log-log slope of time over ${sizes[*]} runs: $(slope export_s)"
fi
