#!/usr/bin/env bash
# Each CPU fast path (suite/nn/cpu/README.md) against its reference on both LibTorch releases:
# the benchmarks that time a fast path beside its reference in one run, on this Debian 12
# build (LibTorch 1.13) and in the Debian 13 root of scripts/test_debian13.sh (LibTorch 2.6),
# one thread, three repetitions, and a table of the medians and their ratios. A path whose
# reference is within 10 % of it on both releases no longer earns its code
# (docs/benchmarks.md, "The CPU fast paths on both LibTorch releases").
# Run as root (the Debian 13 root); about 10 minutes once both builds are there.
# Usage: scripts/fast_paths_side_by_side.sh [OUT]     (OUT: build/fast-paths)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build/fast-paths}
mkdir -p "$out"
filter='fast_path/|attention/softmax_(fused|libtorch|sdpa)/8$|dropout/(philox|libtorch)$|optimizer/|norm/layer_norm_(rows|libtorch)/0/1$'
./scripts/build.sh lrb_bench
echo "side by side: Debian 12 (LibTorch 1.13)"
OMP_NUM_THREADS=1 build/tests/lrb_bench --benchmark_filter="$filter" --benchmark_repetitions=3 \
  --benchmark_report_aggregates_only=true --benchmark_format=json --benchmark_out="$out/debian12.json" >/dev/null
echo "side by side: Debian 13 (LibTorch 2.6)"
LRB_DEBIAN13_BENCH=$filter ./scripts/test_debian13.sh
cp "${LRB_DEBIAN13_ROOT:-/var/cache/lrbench/debian13-root}/build/bench.json" "$out/debian13.json"
/usr/bin/python3 - "$out/debian12.json" "$out/debian13.json" <<'PY'
import json, sys
# fast path: (its benchmark, its reference's, LibTorch's own fused op where 2.x has one)
pairs = [
    ("small_head_softmax", "attention/softmax_fused/8", "attention/softmax_libtorch/8", "attention/softmax_sdpa/8"),
    ("softmax_rows", "fast_path/softmax_rows/fused", "fast_path/softmax_rows/reference", None),
    ("linear_fused", "fast_path/linear_fused/fused", "fast_path/linear_fused/reference", None),
    ("retention_chunks", "fast_path/retention_chunks/fused", "fast_path/retention_chunks/reference", None),
    ("tala_band", "fast_path/tala_band/fused", "fast_path/tala_band/reference", None),
    ("layer_norm", "norm/layer_norm_rows/0/1", "norm/layer_norm_libtorch/0/1", None),
    ("dropout + philox_blocks", "dropout/philox", "dropout/libtorch", None),
    ("fused_adamw", "optimizer/adamw_fused", "optimizer/adamw_libtorch", None),
]
def medians(path):
    got = {}
    for b in json.load(open(path))["benchmarks"]:
        if b.get("aggregate_name") == "median":
            name = b["run_name"].split("/min_warmup_time")[0].split("/real_time")[0]
            got[name] = b["real_time"] * {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b["time_unit"]]
    return got
old, new = medians(sys.argv[1]), medians(sys.argv[2])
def cell(t, fast, ref):
    if fast not in t or ref not in t:
        return "—", "—", "—"
    return f"{t[fast]:.2f}", f"{t[ref]:.2f}", f"{t[ref] / t[fast]:.2f}×"
print("| fast path | 1.13 fast (ms) | 1.13 reference (ms) | 1.13 ratio | 2.6 fast (ms) | 2.6 reference (ms) | 2.6 ratio | 2.6 SDPA (ms) |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for name, fast, ref, own in pairs:
    a, b = cell(old, fast, ref), cell(new, fast, ref)
    sdpa = f"{new[own]:.2f}" if own and own in new else "—"
    print(f"| `{name}` | {' | '.join(a)} | {' | '.join(b)} | {sdpa} |")
PY
