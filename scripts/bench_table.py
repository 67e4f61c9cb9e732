#!/usr/bin/python3
"""Turns `lrb_bench --benchmark_format=json` output into Markdown tables: per kernel and
sequence length the time, peak memory and score count, then per kernel the log-log slopes of
peak memory and of time against N (least squares over all lengths measured) and the ratios
to a reference kernel at one length; where the run holds the matrix-product reference
(roofline/matmul), each kernel's useful FLOP rate as a share of it ("% of matmul").

  ./build/tests/lrb_bench --benchmark_filter='attention/|roofline/' --benchmark_format=json > bench.json
  /usr/bin/python3 scripts/bench_table.py bench.json [--reference softmax] [--at 8192]

Benchmark names are <group>/<kernel>/<N>[/...]; N also comes from the "N" counter when present.
Needs only Debian's python3 and python3-numpy.
"""
import argparse
import json
import sys

import numpy as np

TIME_TO_MS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}


def parse(doc):
    rows = {}
    for b in doc.get("benchmarks", []):
        if b.get("run_type") == "aggregate" or b.get("error_occurred"):
            continue
        parts = b["name"].split("/")
        idx = next((i for i, p in enumerate(parts) if p.isdigit()), None)
        if idx is None:
            continue
        n = int(b.get("N", parts[idx]))
        kernel = "/".join(parts[1:idx] if idx > 1 else parts[:idx])
        unit = TIME_TO_MS[b.get("time_unit", "ns")]
        rows.setdefault(kernel, {})[n] = {
            "real_ms": b["real_time"] * unit,
            "cpu_ms": b["cpu_time"] * unit,
            "peak": b.get("peak_bytes", float("nan")),
            "scores": b.get("score_elements", float("nan")),
            "useful_flops": b.get("useful_flops", float("nan")),
            "flops_per_s": b.get("flops_per_s", float("nan")),
        }
    return rows


def slope(ns, ys):
    ns, ys = np.asarray(ns, float), np.asarray(ys, float)
    ok = (ys > 0) & np.isfinite(ys)
    if ok.sum() < 2:
        return float("nan")
    return float(np.polyfit(np.log(ns[ok]), np.log(ys[ok]), 1)[0])


def fmt(x, digits=2):
    if x is None or (isinstance(x, float) and not np.isfinite(x)):
        return "–"
    return f"{x:.{digits}f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json", nargs="*", help="Google Benchmark JSON files (default: stdin); a later file's "
                    "result for the same kernel and N replaces an earlier one")
    ap.add_argument("--reference", default="softmax", help="kernel the ratios compare against")
    ap.add_argument("--at", type=int, default=8192, help="sequence length of the ratios")
    ap.add_argument("--time", choices=["cpu", "real"], default="cpu",
                    help="time the slopes and speed-ups use (default cpu: the benchmarks run one "
                         "thread, and CPU time is robust to other load on a shared machine)")
    args = ap.parse_args()
    texts = [open(path).read() for path in args.json] if args.json else [sys.stdin.read()]
    rows = {}
    for text in texts:
        # benchmark_main may print its console table before the JSON when both go to stdout.
        for kernel, by_n in parse(json.loads(text[text.index("{"):])).items():
            rows.setdefault(kernel, {}).update(by_n)
    if not rows:
        sys.exit("no benchmarks with a sequence length found")
    matmul = rows.pop("matmul", {})

    key = args.time + "_ms"
    print("| kernel | N | CPU time (ms) | real time (ms) | peak (MiB) | score elements |")
    print("|---|---:|---:|---:|---:|---:|")
    for kernel, by_n in rows.items():
        for n in sorted(by_n):
            r = by_n[n]
            print(f"| {kernel} | {n} | {fmt(r['cpu_ms'], 1)} | {fmt(r['real_ms'], 1)} | {fmt(r['peak'] / 2**20, 1)} "
                  f"| {r['scores']:.4g} |")

    ref = rows.get(args.reference, {}).get(args.at)
    print()
    print(f"| kernel | N range | peak-memory slope | {args.time} time slope "
          f"| speed-up ({args.time} time) vs {args.reference} @ {args.at} "
          f"| peak-memory ratio vs {args.reference} @ {args.at} |")
    print("|---|---|---:|---:|---:|---:|")
    for kernel, by_n in rows.items():
        ns = sorted(by_n)
        mem = slope(ns, [by_n[n]["peak"] for n in ns])
        tim = slope(ns, [by_n[n][key] for n in ns])
        here = by_n.get(args.at)
        speed = ref[key] / here[key] if ref and here else None
        memr = ref["peak"] / here["peak"] if ref and here else None
        print(f"| {kernel} | {ns[0]}–{ns[-1]} | {fmt(mem)} | {fmt(tim)} | {fmt(speed, 1)}× | {fmt(memr, 1)}× |"
              .replace("| –× |", "| – |"))

    if not matmul:
        return
    n_ref = max(matmul)
    peak = matmul[n_ref]["flops_per_s"]
    print()
    print(f"Useful FLOP rate (forward + backward) against a float32 {n_ref}³ matrix product on the same "
          f"thread in the same run: {peak / 1e9:.1f} GFLOP/s.")
    print()
    print("| kernel | N | useful GFLOP | real time (ms) | GFLOP/s | % of matmul |")
    print("|---|---:|---:|---:|---:|---:|")
    for kernel, by_n in rows.items():
        for n in sorted(set(by_n) & {4096, args.at}):
            r = by_n[n]
            if not np.isfinite(r["useful_flops"]):
                continue
            rate = r["useful_flops"] / (r["real_ms"] / 1e3)
            print(f"| {kernel} | {n} | {fmt(r['useful_flops'] / 1e9, 2)} | {fmt(r['real_ms'], 1)} | {fmt(rate / 1e9, 1)} "
                  f"| {fmt(100 * rate / peak, 0)} % |")


if __name__ == "__main__":
    main()
