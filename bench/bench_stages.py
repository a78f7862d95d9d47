#!/usr/bin/env python3
"""Seconds per pipeline stage on one file, in this process (for profiling the analysis apart
from the front end and the checks).

    python bench/bench_stages.py FILE [--repeat 5] [--cwd DIR] [--profile OUT.prof]

Parses the file once per target variant (as `lint_text` does), then times, best of N and
median: `parse` (front end), `analyse` (CFGs + divergence analysis of every variant) and
`check` (every rule).  CPU seconds of this process (`time.process_time`), so that other work on
a shared machine disturbs them less than wall time.  Run it with PYTHONPATH set to the tree to
measure; interleave two trees' runs for a same-run ratio.  `--profile` writes a cProfile of one
analyse+check round.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file")
    ap.add_argument("--repeat", "-n", type=int, default=5)
    ap.add_argument("--cwd", help="run from this directory (a corpus repository), FILE relative to it")
    ap.add_argument("--profile", metavar="OUT", help="write a cProfile of one analyse+check round here")
    args = ap.parse_args(argv)
    if args.cwd:
        os.chdir(args.cwd)
    from warplint.options import Options
    from warplint.pipeline import analyse, check, parse_variants, read_source

    text, _ = read_source(args.file)
    options = Options()
    times: dict[str, list[float]] = {"parse": [], "analyse": [], "check": []}
    try:
        from warplint.analysis.lanes import forget_memos
    except ImportError:  # a tree from before the memos
        def forget_memos():
            pass
    for _ in range(args.repeat):
        forget_memos()  # each round cold, as in a fresh process
        t0 = time.process_time()
        variants = parse_variants(text, args.file, options)
        t1 = time.process_time()
        analysed = [(m, analyse(m, options), targets) for m, targets in variants]
        t2 = time.process_time()
        for m, a, targets in analysed:
            check(m, a, targets, options)
        t3 = time.process_time()
        for stage, secs in zip(times, (t1 - t0, t2 - t1, t3 - t2)):
            times[stage].append(secs)
    print(f"{args.file}: {len(variants)} variant(s), best / median CPU seconds of {args.repeat}")
    for stage, secs in times.items():
        print(f"  {stage:<8} {min(secs):8.3f} {statistics.median(secs):8.3f}")
    if args.profile:
        import cProfile

        def round_():
            for m, targets in variants:
                check(m, analyse(m, options), targets, options)
        cProfile.runctx("round_()", globals(), {"round_": round_}, args.profile)
    return 0


if __name__ == "__main__":
    sys.exit(main())
