#!/usr/bin/env python3
"""The translation units of a build that have CUDA or NCCL code, as ninja targets.

Usage: cuda_sources.py BUILD/compile_commands.json SOURCE_DIR > objects

A file has CUDA or NCCL code when a preprocessor line tests LRB_WITH_CUDA or LRB_WITH_NCCL,
or includes a CUDA, NCCL, c10/cuda or ATen/cuda header (the rule of cmake/cuda.cmake). A
translation unit of the build is listed when it, or a repository header it includes
(transitively), has such code. Prints each one's object file (one per line, for ninja) and,
on stderr, the sources; exits 1 when a repository file with such code is compiled by no
translation unit of the build: a CUDA path nothing would check.
"""
import json
import os
import re
import sys

CUDA_LINE = re.compile(
    r"^\s*#\s*(?:(?:if|ifdef|ifndef|elif)\b.*\bLRB_WITH_(?:CUDA|NCCL)\b"
    r"|include\s*<(?:cuda[a-z_]*\.h|nccl\.h|c10/cuda/|ATen/cuda/))",
    re.M)
PROJECT_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
FOLDERS = ("suite", "workloads", "baselines", "tests")


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def main():
    commands, src = sys.argv[1], os.path.realpath(sys.argv[2])
    text_of = {}

    def text(path):
        if path not in text_of:
            text_of[path] = read(path) if os.path.isfile(path) else ""
        return text_of[path]

    def includes(path):
        out = []
        for name in PROJECT_INCLUDE.findall(text(path)):
            for base in (src, os.path.dirname(path)):
                candidate = os.path.realpath(os.path.join(base, name))
                if candidate.startswith(src + os.sep) and os.path.isfile(candidate):
                    out.append(candidate)
                    break
        return out

    def closure(path):
        seen, todo = set(), [path]
        while todo:
            p = todo.pop()
            if p in seen:
                continue
            seen.add(p)
            todo.extend(includes(p))
        return seen

    with open(commands, encoding="utf-8") as f:
        entries = json.load(f)
    chosen, reached = [], set()
    for e in entries:
        source = os.path.realpath(os.path.join(e["directory"], e["file"]))
        if not source.startswith(src + os.sep):
            continue  # generated sources (the sbatch templates, the git revision)
        files = closure(source)
        if any(CUDA_LINE.search(text(p)) for p in files):
            chosen.append((source, e["output"]))
            reached |= files

    with_cuda = []
    for folder in FOLDERS:
        for dirpath, _, names in os.walk(os.path.join(src, folder)):
            for n in names:
                if n.endswith((".cpp", ".h", ".cc", ".cu", ".cuh")):
                    p = os.path.join(dirpath, n)
                    if CUDA_LINE.search(text(p)):
                        with_cuda.append(p)
    missing = sorted(p for p in with_cuda if p not in reached)

    for source, _ in sorted(chosen):
        print(f"cuda-sources: {os.path.relpath(source, src)}", file=sys.stderr)
    print(f"cuda-sources: {len(chosen)} translation units cover the {len(with_cuda)} files with CUDA or NCCL code",
          file=sys.stderr)
    for p in missing:
        print(f"cuda-sources: {os.path.relpath(p, src)} has CUDA or NCCL code but no translation unit of the build "
              "compiles it", file=sys.stderr)
    for _, output in sorted(chosen):
        print(output)
    return 1 if missing or not chosen else 0


if __name__ == "__main__":
    sys.exit(main())
