#!/usr/bin/env bash
# The one work queue on rank 0 at many ranks: lrb_queue_bench (tests/bench/tools/) under
# mpirun, oversubscribed, at 8, 32, 128 and MAX ranks, each with runs of 20 ms and 200 ms
# (sleeps: no training, so hundreds of ranks fit on a few cores). For each: requests per
# second, a request's latency as the asking rank sees it (median, 99th percentile), and
# rank 0's CPU share (its process's CPU time over the wall time). Then a least-squares fit
#   rank 0's share = idle + cost × requests per second
# and the projection: the most ranks at which rank 0 stays under 10 % busy when each rank
# asks once per run, for runs of one minute and of one second (requests/s = ranks / run).
# Usage: tests/bench/queue_scale.sh [build dir] [max ranks]   (default: build 256)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
max=${2:-256}
bench=$build/tests/lrb_queue_bench
[ -x "$bench" ] || { echo "queue_scale: build $bench first (cmake --build $build --target lrb_queue_bench)" >&2; exit 2; }
mpirun_args=(mpirun --oversubscribe --bind-to none)
[ "$(id -u)" = 0 ] && mpirun_args+=(--allow-run-as-root)
work_dir=$(mktemp -d)
trap 'rm -rf "$work_dir"' EXIT

echo "queue_scale: $(nproc) cores ($(lscpu | sed -n 's/^Model name: *//p' | head -1)), ranks 8 32 128 $max"
printf '%6s %8s %8s %8s %11s %14s %14s %11s\n' ranks run_ms runs wall_s requests/s latency_med_us latency_p99_us rank0_busy
for ranks in 8 32 128 "$max"; do
  for work in 20 200; do
    runs=$((ranks * 8000 / work))  # about 8 s of each rank's sleeping per configuration
    line=$("${mpirun_args[@]}" -np "$ranks" "$bench" "$runs" "$work")
    echo "$line" >> "$work_dir/lines"
    echo "$line" | awk '{ for (i = 1; i < NF; i += 2) v[$i] = $(i + 1)
      printf "%6d %8g %8d %8.2f %11.0f %14.0f %14.0f %10.2f%%\n", v["ranks"], v["work_ms"], v["runs"], v["wall_s"],
             v["requests_per_s"], v["latency_median_us"], v["latency_p99_us"], 100 * v["rank0_cpu_share"] }'
  done
done
awk '{ for (i = 1; i < NF; i += 2) v[$i] = $(i + 1)
       x = v["requests_per_s"]; y = v["rank0_cpu_share"]; n++; sx += x; sy += y; sxx += x * x; sxy += x * y }
     END {
       cost = (n * sxy - sx * sy) / (n * sxx - sx * sx); idle = (sy - cost * sx) / n
       printf "fit: rank 0 busy = %.2f %% + %.1f us x requests/s (least squares over %d configurations)\n", 100 * idle, 1e6 * cost, n
       if (cost <= 0) { print "projection: rank 0 busy does not grow with requests here"; exit }
       if (idle >= 0.10) { printf "projection: rank 0 is %.1f %% busy idle, over 10 %% before any request\n", 100 * idle; exit }
       for (k = 0; k < 2; k++) {
         run = k == 0 ? 60 : 1
         printf "projection: runs of %2d s: rank 0 under 10 %% busy up to %.0f ranks\n", run, (0.10 - idle) * run / cost
       }
     }' "$work_dir/lines"
