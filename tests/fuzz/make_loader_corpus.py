#!/usr/bin/python3
"""Writes the seed corpora of the loader and attend fuzz targets (tests/fuzz/corpus/idx,
ucr, hdf5_data, attend_input): small valid files of every layout each reader takes, and a
few it must refuse. Run from anywhere; the files are committed, this records how they were
made. Needs python3-numpy and python3-h5py (scripts/setup.sh installs them)."""
import glob
import gzip
import os
import struct

import h5py
import numpy as np

os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus"))
for d in ("idx", "ucr", "hdf5_data", "attend_input"):
    os.makedirs(d, exist_ok=True)
rng = np.random.default_rng(1)

# idx: every element type, 1 to 3 dimensions, plain and gzip.
types = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}
for code, be in types.items():
    for shape in [(5,), (3, 4), (2, 3, 4)]:
        a = rng.integers(0, 100, size=shape).astype(be)
        b = struct.pack(">BBBB", 0, 0, code, len(shape)) + b"".join(struct.pack(">I", d) for d in shape) + a.tobytes()
        name = f"idx/t{code:02x}-d{len(shape)}"
        open(name, "wb").write(b)
        if len(shape) == 2:
            open(name + ".gz", "wb").write(gzip.compress(b, mtime=0))
# A real Fashion-MNIST label file cut to its first 2,000 labels (its header says so).
for f in glob.glob("/usr/share/datasets/fashion-mnist/*t10k-labels*"):
    raw = gzip.open(f).read() if f.endswith(".gz") else open(f, "rb").read()
    b = raw[:4] + struct.pack(">I", 2000) + raw[8:8 + 2000]
    open("idx/fashion-t10k-labels-2000", "wb").write(b)
    open("idx/fashion-t10k-labels-2000.gz", "wb").write(gzip.compress(b, mtime=0))
    break

# UCR: the first byte chooses the format in ucr_fuzz (even .ts, odd .tsv).
ts_uni = ("@problemName Toy\n@timeStamps false\n@missing false\n@univariate true\n@equalLength true\n"
          "@seriesLength 4\n@classLabel true low high\n@data\n1.0,2.0,3.0,4.0:low\n4.0,3.0,2.0,1.0:high\n0.5,0.5,0.5,0.5:low\n")
ts_multi = ("@problemName Multi\n@timeStamps false\n@missing false\n@univariate false\n@dimensions 2\n@equalLength true\n"
            "@seriesLength 3\n@classLabel true a b c\n@data\n1,2,3:4,5,6:a\n-1,-2,-3:0.25,1e-3,7:b\n9,8,7:6,5,4:c\n")
ts_comment = "# a comment\n" + ts_uni.replace("@data\n", "@data\n\n")
for name, first, text in [("uni.ts", 0, ts_uni), ("multi.ts", 2, ts_multi), ("comment.ts", 4, ts_comment),
                          ("ucr2018.tsv", 1, "1\t0.1\t0.2\t0.3\n2\t0.4\t0.5\t0.6\n-1\t1e3\t-2.5\t0\n"),
                          ("labels.tsv", 3, "cat\t1\t2\ndog\t3\t4\n")]:
    open("ucr/" + name, "wb").write(bytes([first]) + text.encode())


def h5file(path):
    return h5py.File(path, "w", libver=("earliest", "v110"))


# HDF5 data files (task hdf5-file): tokens, signal, grid, multi-label, a split, chunked and
# compressed, and two the reader refuses (a label out of range, NaN).
N = 6
def data(name, attrs=None, **sets):
    with h5file("hdf5_data/" + name) as f:
        for k, v in sets.items():
            f.create_dataset(k, data=v)
        for k, v in (attrs or {}).items():
            f.attrs[k] = v
data("tokens.h5", {"vocab_size": 10, "pad_token": 0, "num_classes": 3},
     x=rng.integers(0, 10, size=(N, 8)).astype(np.int32), y=np.arange(N) % 3)
data("signal.h5", x=rng.normal(size=(N, 8, 2)).astype(np.float32), y=np.arange(N) % 2)
data("grid.h5", x=rng.normal(size=(N, 1, 4, 4)), y=(np.arange(N) % 4).astype(np.uint8),
     split=np.array([0, 0, 0, 0, 1, 2], dtype=np.int8))
data("multilabel.h5", {"num_classes": 3}, x=rng.normal(size=(N, 5, 3)).astype(np.float32),
     y=(rng.random((N, 3)) > 0.5).astype(np.int8))
data("refused-label.h5", {"num_classes": 3}, x=rng.integers(0, 10, size=(N, 8)), y=np.arange(N) + 5)
data("refused-nan.h5", x=np.full((N, 4, 1), np.nan, dtype=np.float32), y=np.zeros(N, dtype=np.int64))
with h5file("hdf5_data/chunked.h5") as f:
    f.create_dataset("x", data=rng.normal(size=(N, 16, 1)).astype(np.float32), chunks=(2, 16, 1),
                     compression="gzip", fletcher32=True)
    f.create_dataset("y", data=np.arange(N) % 2)

# attend inputs: q, k, v, with each optional input a kernel may read, and a wrong rank.
def attend(name, B=1, H=2, n=8, d=4, **extra):
    with h5file("attend_input/" + name) as f:
        f["q"] = rng.normal(size=(B, H, n, d)).astype(np.float32)
        f["k"] = rng.normal(size=(B, H, n, d)).astype(np.float32)
        f["v"] = rng.normal(size=(B, H, n, d))
        for k, v in extra.items():
            f[k] = v
attend("qkv.h5")
attend("mask.h5", B=2, mask=np.array([[1] * 8, [1] * 5 + [0] * 3], dtype=np.uint8))
attend("global-positions.h5", B=2, **{"global": np.array([0, 3], dtype=np.int64)})
attend("global-mask.h5", B=2, **{"global": np.array([[1, 0, 0, 0, 0, 0, 0, 1], [0] * 8], dtype=np.uint8)})
attend("sizes.h5", B=2, sizes=np.ones((2, 8), dtype=np.float32))
attend("all.h5", B=2, mask=np.ones((2, 8), dtype=bool), sizes=np.full((2, 8), 2.0, dtype=np.float32),
       **{"global": np.array([[0], [1]])})
with h5file("attend_input/refused-rank.h5") as f:
    f["q"] = np.zeros((2, 3), dtype=np.float32)
    f["k"] = np.zeros((2, 3))
    f["v"] = np.zeros((2, 3))
