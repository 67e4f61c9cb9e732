#!/usr/bin/env python3
"""The quickstart's Transformer in plain PyTorch, its training step timed beside lrbench's.

Usage: pytorch_peer.py --lrbench build/lrbench [--rounds 3] [--steps 110] [--threads 1]

The peer a user would write instead: the same layers and sizes as lrbench's Transformer
(baselines/transformer.cpp) on Fashion-MNIST as the quickstart runs it — a 3x3 stride-2
convolution stem (28x28 -> 196 tokens of width 32) with learned positions, 2 pre-norm layers
(fused qkv, 4 heads, softmax attention, GELU MLP x4, dropout 0.1 on both residual branches),
mean pooling, LayerNorm, a linear head — trained with AdamW (lr 2e-3, weight decay 0.01,
30 warm-up steps then cosine), gradient clipping at 1.0, batches of 32 drawn from 10,000
images held in memory. Its step is the whole iteration (draw the batch, forward, backward,
clip, optimizer and schedule). lrbench's is its `step_seconds_median` for the same model,
task and sizes (a one-seed sweep written here, `--steps` steps, no evaluation during
training). Each round runs both, lrbench first; the medians exclude the first 10 steps. The
eager peer runs on every PyTorch; `torch.compile` is timed too where the installed PyTorch
has it (2.0 and later; Debian 12's python3-torch is 1.13, which has not).
One JSON object per round and a summary line: the step medians and their ratio.
"""
import argparse
import csv
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

SWEEP = """[sweep]
name = "peer"
seeds = 1
base_seed = 1
threads = {threads}

[train]
steps = {steps}
batch_size = 32
optimizer = "adamw"
lr = 2e-3
warmup_steps = 30
schedule = "cosine"
weight_decay = 0.01
grad_clip = 1.0
eval_size = 100

[[task]]
name = "fashion-mnist"
view = "grid"
train_size = 10000

[[model]]
name = "transformer"
dim = 32
depth = 2
heads = 4
patch = 2
"""


class Layer(nn.Module):
    def __init__(self, dim, heads, mlp_ratio, dropout):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.fc1, self.fc2 = nn.Linear(dim, mlp_ratio * dim), nn.Linear(mlp_ratio * dim, dim)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, n, 3, self.heads, d // self.heads).unbind(2)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
        a = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d // self.heads), dim=-1) @ v
        y = x + self.drop(self.proj(a.transpose(1, 2).reshape(b, n, d)))
        return y + self.drop(self.fc2(F.gelu(self.fc1(self.norm2(y)))))


class Transformer(nn.Module):
    def __init__(self, dim=32, depth=2, heads=4, mlp_ratio=4, dropout=0.1, patch=2, classes=10):
        super().__init__()
        self.stem = nn.Conv2d(1, dim, 2 * patch - 1, stride=patch, padding=patch - 1)
        self.pos = nn.Parameter(torch.randn(1, (28 // patch) ** 2, dim) * 0.02)
        self.layers = nn.ModuleList(Layer(dim, heads, mlp_ratio, dropout) for _ in range(depth))
        self.norm, self.head = nn.LayerNorm(dim), nn.Linear(dim, classes)

    def forward(self, x):
        h = self.stem(x).flatten(2).transpose(1, 2) + self.pos
        for layer in self.layers:
            h = layer(h)
        return self.head(self.norm(h.mean(1)))


def peer_steps(steps, compiled):
    torch.manual_seed(1)
    model = Transformer()
    images, labels = torch.rand(10000, 1, 28, 28), torch.randint(0, 10, (10000,))
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=0.01)

    def lr_at(s):
        if s < 30:
            return (s + 1) / 30
        return 0.5 * (1 + math.cos(math.pi * (s - 30) / max(1, steps - 30)))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_at)
    step_fn = torch.compile(model) if compiled else model
    times = []
    for s in range(steps):
        t0 = time.perf_counter()
        idx = torch.randint(0, 10000, (32,))
        loss = F.cross_entropy(step_fn(images[idx]), labels[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        times.append(time.perf_counter() - t0)
    return statistics.median(times[10:])


def lrbench_step(lrbench, steps, threads):
    with tempfile.TemporaryDirectory() as d:
        sweep = os.path.join(d, "peer.toml")
        with open(sweep, "w") as f:
            f.write(SWEEP.format(steps=steps, threads=threads))
        subprocess.run([lrbench, "run", sweep, "--out", os.path.join(d, "out")], check=True, capture_output=True)
        subprocess.run([lrbench, "export", os.path.join(d, "out"), "-o", os.path.join(d, "runs.csv")], check=True,
                       capture_output=True)
        with open(os.path.join(d, "runs.csv")) as f:
            for row in csv.DictReader(f):
                if row["figure"] == "step_seconds_median":
                    return float(row["value"])
    raise RuntimeError("lrbench recorded no step_seconds_median")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lrbench", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=110)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    can_compile = hasattr(torch, "compile")
    ratios, ratios_compiled = [], []
    for r in range(args.rounds):
        ours = lrbench_step(args.lrbench, args.steps, args.threads)
        eager = peer_steps(args.steps, False)
        row = {"round": r + 1, "lrbench_s": ours, "pytorch_eager_s": eager, "eager_over_lrbench": eager / ours}
        ratios.append(eager / ours)
        if can_compile:
            compiled = peer_steps(args.steps, True)
            row.update({"pytorch_compiled_s": compiled, "compiled_over_lrbench": compiled / ours})
            ratios_compiled.append(compiled / ours)
        else:
            row["pytorch_compiled_s"] = "skipped: torch.compile needs PyTorch 2.0 (this is " + torch.__version__ + ")"
        print(json.dumps(row), flush=True)
    summary = {"torch": torch.__version__, "threads": args.threads, "eager_over_lrbench_median": statistics.median(ratios)}
    if ratios_compiled:
        summary["compiled_over_lrbench_median"] = statistics.median(ratios_compiled)
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
