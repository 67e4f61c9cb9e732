#!/usr/bin/env python3
"""PyTorch's own attention, forward + backward, timed beside lrbench's kernels.

Usage: pytorch_attention_timing.py --device cuda --n 4096,8192 [--window 256] [--repeats 5]

The same shapes as tests/bench/tools/kernel_timing.cpp (B = 1, H = 4, d = 64, float32):
  sdpa           torch.nn.functional.scaled_dot_product_attention, dense (PyTorch picks its
                 backend: for float32 on a GPU the memory-efficient one; FlashAttention
                 takes half precision only)
  flex_window    FlexAttention (torch.nn.attention.flex_attention, compiled) with a
                 sliding-window block mask of one-sided width w, the pattern of lrbench's
                 sliding_window kernel
One JSON object per line: kernel, n, seconds (median of the repeats, each ended by a device
synchronisation), peak_bytes above the inputs (torch.cuda.max_memory_allocated; null on the
CPU), or "skipped" with the reason (an old PyTorch, no GPU for FlexAttention, out of memory).
"""
import argparse
import json
import statistics
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cuda", choices=["cpu", "cuda"])
    ap.add_argument("--n", required=True)
    ap.add_argument("--window", type=int, default=256)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    sizes = [int(x) for x in args.n.split(",") if x]

    def emit(row):
        print(json.dumps(row), flush=True)

    try:
        import torch
    except ImportError:
        for n in sizes:
            for k in ("sdpa", "flex_window"):
                emit({"kernel": k, "n": n, "skipped": "no PyTorch in this python3"})
        return 0
    version = torch.__version__
    cuda = args.device == "cuda"
    if cuda and not torch.cuda.is_available():
        print("pytorch_attention_timing: --device cuda but torch.cuda.is_available() is False", file=sys.stderr)
        return 2
    device = torch.device(args.device)
    sdpa = getattr(torch.nn.functional, "scaled_dot_product_attention", None)
    try:
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    except ImportError:
        flex_attention = None

    def sync():
        if cuda:
            torch.cuda.synchronize()

    def measure(name, n, run):
        torch.manual_seed(0)
        q, k, v = (torch.randn(1, 4, n, 64, device=device, requires_grad=True) for _ in range(3))
        upstream = torch.randn(1, 4, n, 64, device=device)
        seconds, peak = [], None
        try:
            for r in range(args.repeats + 1):  # r = 0 warms up (and compiles)
                for t in (q, k, v):
                    t.grad = None
                sync()
                if cuda:
                    torch.cuda.reset_peak_memory_stats()
                    base = torch.cuda.memory_allocated()
                t0 = time.perf_counter()
                out = run(q, k, v)
                out.backward(upstream)
                sync()
                if r > 0:
                    seconds.append(time.perf_counter() - t0)
                if cuda:
                    peak = max(peak or 0, torch.cuda.max_memory_allocated() - base)
                del out
        except torch.cuda.OutOfMemoryError if cuda else MemoryError:
            emit({"kernel": name, "n": n, "torch": version, "skipped": "out of memory on the device"})
            if cuda:
                torch.cuda.empty_cache()
            return
        emit({"kernel": name, "n": n, "torch": version, "device": args.device, "seconds": statistics.median(seconds),
              "peak_bytes": peak, "repeats": args.repeats})

    compiled_flex = torch.compile(flex_attention) if flex_attention is not None and cuda else None
    for n in sizes:
        if sdpa is None:
            emit({"kernel": "sdpa", "n": n, "torch": version, "skipped": f"PyTorch {version} has no scaled_dot_product_attention"})
        else:
            measure("sdpa", n, lambda q, k, v: sdpa(q, k, v))
        if flex_attention is None:
            emit({"kernel": "flex_window", "n": n, "torch": version, "skipped": f"PyTorch {version} has no FlexAttention"})
        elif compiled_flex is None:
            emit({"kernel": "flex_window", "n": n, "torch": version, "skipped": "FlexAttention is timed on a GPU only"})
        else:
            w = args.window

            def window(b, h, q_idx, kv_idx):
                return (q_idx - kv_idx <= w) & (kv_idx - q_idx <= w)

            mask = create_block_mask(window, B=None, H=None, Q_LEN=n, KV_LEN=n, device=device)
            measure("flex_window", n, lambda q, k, v: compiled_flex(q, k, v, block_mask=mask))
    return 0


if __name__ == "__main__":
    sys.exit(main())
