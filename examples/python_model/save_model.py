#!/usr/bin/env python3
"""Scripts the example model for one task and saves it for lrbench (`model = "torchscript"`).

  # fashion-mnist, grid view: images [1, 28, 28], 10 classes, 4x4 patches
  python3 save_model.py grid --channels 1 --height 28 --width 28 --patch 4 --classes 10 -o tiny_attention.pt
  # listops at seq_len 512: token ids below 16, pad 0, 10 classes
  python3 save_model.py tokens --vocab 16 --seq-len 512 --classes 10 -o listops.pt
  # wingbeat at seq_len 1024: one feature per step, 6 classes
  python3 save_model.py signal --channels 1 --seq-len 1024 --classes 6 -o wingbeat.pt

The sizes are the task's (workloads/README.md lists every task's). lrbench tries the
saved module on one batch of the task before any run and says what does not fit.
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model import PatchStem, SignalStem, TinyAttention, TokenStem  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input", choices=["tokens", "signal", "grid"], help="the task's kind of input")
    p.add_argument("--classes", type=int, required=True, help="outputs of the head (the task's classes)")
    p.add_argument("--vocab", type=int, help="tokens: ids are below this")
    p.add_argument("--seq-len", type=int, help="tokens, signal: steps per sample")
    p.add_argument("--channels", type=int, help="signal: features per step; grid: image channels")
    p.add_argument("--height", type=int, help="grid: image height")
    p.add_argument("--width", type=int, help="grid: image width")
    p.add_argument("--patch", type=int, default=4, help="grid: patch side (default 4)")
    p.add_argument("--dim", type=int, default=32, help="width of the model (default 32)")
    p.add_argument("-o", "--output", required=True, help="the file to write (.pt)")
    a = p.parse_args()
    needed = {"tokens": ["vocab", "seq_len"], "signal": ["channels", "seq_len"], "grid": ["channels", "height", "width"]}
    missing = [f"--{n.replace('_', '-')}" for n in needed[a.input] if getattr(a, n) is None]
    if missing:
        p.error(f"{a.input} needs {' '.join(missing)}")
    if a.input == "tokens":
        stem = TokenStem(a.vocab, a.seq_len, a.dim)
    elif a.input == "signal":
        stem = SignalStem(a.channels, a.seq_len, a.dim)
    else:
        stem = PatchStem(a.channels, a.height, a.width, a.patch, a.dim)
    module = torch.jit.script(TinyAttention(stem, a.classes, a.dim))
    module.reset_parameters(0)
    torch.jit.save(module, a.output)
    print(f"saved {a.output}: TorchScript from PyTorch {torch.__version__}, "
          f"{sum(p.numel() for p in module.parameters())} parameters")


if __name__ == "__main__":
    main()
