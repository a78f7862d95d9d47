#!/usr/bin/env python3
"""CPU milliseconds of the CUDA front end per stage, in this process, without a profiler.

    python bench/bench_frontend.py FILE [--cwd DIR] [--repeat 3]     # one file, memories emptied per round
    python bench/bench_frontend.py --new-files 12                     # new 300-line files in one process

Times `pipeline.parse_variants` (every target text of the file) with the cyclic collector off, as
`lint_text` runs it, and the stages inside it by wrappers: preprocess, the C++ layer
(`cxx.desugar`), the rewriter, pycparser (`frontend._parse_chunk`), the lowering (`Lowerer.top`),
the warp code scan.  FILE rounds start with the in-process memories of texts emptied (a fresh
process); `--new-files` times files of new code (bench_latency.py's file, its kernels renamed)
after two untimed ones, as bench_batch.py's "own text" batch meets them.  Run with PYTHONPATH
set to the tree to measure; interleave two trees' runs for a same-run ratio.
"""
from __future__ import annotations

import argparse
import collections
import functools
import gc
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def _wrap(owner, name: str, label: str, spent: collections.Counter) -> None:
    inner = getattr(owner, name)

    @functools.wraps(inner)
    def timed(*args, **kwargs):
        t0 = time.process_time()
        try:
            return inner(*args, **kwargs)
        finally:
            spent[label] += time.process_time() - t0
    setattr(owner, name, timed)


def _forget_texts() -> None:
    from warplint.frontends.cuda import frontend, lexer
    for memo in (frontend.PARSED, lexer.TOKENIZED):
        memo.entries.clear()
        memo.chars = 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", nargs="?")
    ap.add_argument("--cwd", help="run from this directory (a corpus repository), FILE relative to it")
    ap.add_argument("--repeat", "-n", type=int, default=3)
    ap.add_argument("--new-files", type=int, default=0, metavar="N")
    args = ap.parse_args(argv)
    if not args.file and not args.new_files:
        ap.error("a FILE or --new-files N")
    if args.cwd:
        os.chdir(args.cwd)
    from warplint.frontends.cuda import frontend, lower, rewrite
    from warplint.options import Options
    from warplint.pipeline import parse_variants, read_source
    spent: collections.Counter = collections.Counter()
    for name, label in (("preprocess", "preprocess"), ("desugar", "cxx.desugar"), ("_parse_chunk", "pycparser"),
                        ("warp_functions", "warp code")):
        _wrap(frontend, name, label, spent)
    _wrap(rewrite.Rewriter, "run", "rewrite", spent)
    _wrap(lower.Lowerer, "top", "lower.top", spent)
    if args.file:
        text, _ = read_source(args.file)
        inputs = [(text, args.file)] * (args.repeat + 1)
    else:
        from bench_latency import make_file
        seed = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench_frontend_{os.getpid()}.cu"
        make_file(seed)
        base = seed.read_text()
        seed.unlink()
        inputs = [(base.replace("void k", f"void copy{i}_k"), f"new_{i}.cu") for i in range(args.new_files + 2)]
    warm = 1 if args.file else 2
    totals = []
    gc.disable()
    for i, (text, path) in enumerate(inputs):
        if args.file:
            _forget_texts()
        gc.collect()
        if i == warm:
            spent.clear()
        t0 = time.process_time()
        parse_variants(text, path, Options())
        if i >= warm:
            totals.append(time.process_time() - t0)
    n = len(totals)
    print(f"{args.file or f'{n} new files'}: front end {1000 * sum(totals) / n:.1f} ms CPU per run "
          f"(best {1000 * min(totals):.1f})")
    for label, secs in spent.most_common():
        print(f"  {label:<12} {1000 * secs / n:8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
