"""A small attention model written in PyTorch for lrbench (docs/python-models.md).

One pre-norm self-attention layer and a feed-forward block over tokens made by a stem for
the task's kind of input, mean pooling over the real tokens and a linear head. lrbench calls

  forward(x, keep) -> logits   x: the batch, as the task gives it:
                                 tokens  [B, N] int64 token ids
                                 signal  [B, N, C] float32 features per step
                                 grid    [B, C, H, W] float32 image
                               keep: bool, true where the input is real (padding false):
                                 [B, N] for tokens and signals, [B, H, W] for grids
                               logits: [B, classes] float32
  reset_parameters(seed)       once per run before training: draw fresh weights, so that
                               every seed of a sweep starts from its own initialisation
"""
import math
from typing import List, Tuple

import torch


def init_linear(w: torch.Tensor, b: torch.Tensor):
    bound = 1.0 / math.sqrt(w[0].numel())
    w.uniform_(-bound, bound)
    b.zero_()


class TokenStem(torch.nn.Module):
    """Token ids [B, N] -> [B, N, dim]: an embedding and learned positions."""

    def __init__(self, vocab: int, seq_len: int, dim: int):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, dim)
        self.position = torch.nn.Parameter(torch.zeros(seq_len, dim))

    def forward(self, x: torch.Tensor, keep: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        return self.embed(x) + self.position[: x.size(1)], keep

    def reset(self):
        self.embed.weight.normal_(0.0, 0.02)
        self.position.normal_(0.0, 0.02)


class SignalStem(torch.nn.Module):
    """Features [B, N, C] -> [B, N, dim]: a linear map per step and learned positions."""

    def __init__(self, channels: int, seq_len: int, dim: int):
        super().__init__()
        self.proj = torch.nn.Linear(channels, dim)
        self.position = torch.nn.Parameter(torch.zeros(seq_len, dim))

    def forward(self, x: torch.Tensor, keep: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        return self.proj(x) + self.position[: x.size(1)], keep

    def reset(self):
        init_linear(self.proj.weight, self.proj.bias)
        self.position.normal_(0.0, 0.02)


class PatchStem(torch.nn.Module):
    """Image [B, C, H, W] -> [B, (H/p)(W/p), dim]: non-overlapping p x p patches."""

    def __init__(self, channels: int, height: int, width: int, patch: int, dim: int):
        super().__init__()
        self.patch = patch
        self.conv = torch.nn.Conv2d(channels, dim, patch, stride=patch)
        self.position = torch.nn.Parameter(torch.zeros((height // patch) * (width // patch), dim))

    def forward(self, x: torch.Tensor, keep: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        h = self.conv(x).flatten(2).transpose(1, 2)
        rows, cols = x.size(2) // self.patch, x.size(3) // self.patch
        kept = keep[:, : rows * self.patch : self.patch, : cols * self.patch : self.patch]  # a patch's top-left pixel
        return h + self.position, kept.reshape(x.size(0), rows * cols)

    def reset(self):
        bias = self.conv.bias  # Optional[Tensor] to TorchScript: a conv may have none
        assert bias is not None
        init_linear(self.conv.weight, bias)
        self.position.normal_(0.0, 0.02)


class TinyAttention(torch.nn.Module):
    def __init__(self, stem: torch.nn.Module, classes: int, dim: int = 32):
        super().__init__()
        self.stem = stem
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.out = torch.nn.Linear(dim, dim)
        self.norm1 = torch.nn.LayerNorm(dim)
        self.ff1 = torch.nn.Linear(dim, 2 * dim)
        self.ff2 = torch.nn.Linear(2 * dim, dim)
        self.norm2 = torch.nn.LayerNorm(dim)
        self.head = torch.nn.Linear(dim, classes)
        self.dim = dim

    def forward(self, x: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        h, keep = self.stem(x, keep)
        q, k, v = self.qkv(self.norm1(h)).chunk(3, dim=-1)
        scores = torch.matmul(q, k.transpose(1, 2)) / math.sqrt(self.dim)
        scores = scores.masked_fill(~keep.unsqueeze(1), -1e9)  # padding is never attended to
        h = h + self.out(torch.matmul(torch.softmax(scores, dim=-1), v))
        h = h + self.ff2(torch.relu(self.ff1(self.norm2(h))))
        weight = keep.unsqueeze(-1).to(h.dtype)
        pooled = (h * weight).sum(1) / weight.sum(1).clamp(min=1.0)
        return self.head(pooled)

    @torch.jit.export
    def reset_parameters(self, seed: int):
        # lrbench has seeded the default generator for this run already; seeding again
        # from `seed` makes the initialisation independent of anything drawn before.
        torch.manual_seed(seed)
        with torch.no_grad():
            self.stem.reset()
            for w, b in [(self.qkv.weight, self.qkv.bias), (self.out.weight, self.out.bias),
                         (self.ff1.weight, self.ff1.bias), (self.ff2.weight, self.ff2.bias),
                         (self.head.weight, self.head.bias)]:
                init_linear(w, b)
            for n in [self.norm1, self.norm2]:
                n.weight.fill_(1.0)
                n.bias.zero_()
