#!/usr/bin/env python3
"""PTX front-end speed benchmark: warplint against `ptxas -O3` on the same large nvcc PTX file.

    python bench/bench_ptx.py [--arch sm_80] [--repeat 3] [--no-lineinfo] [--ptx FILE]
                              [--pairs N] [--root TREE]

Generates `bench/out/big_<arch>[_nolines].ptx` from `bench/kernels/big.cu` with nvcc (cached:
regenerated only when the .cu is newer), then measures, best of N runs each:
  ptxas      `ptxas -O3 -arch=<arch> file.ptx -o /dev/null`
  parse      warplint.frontends.ptx.parse_ptx
  parse+cfg  parse_ptx + warplint.cfg.build_cfg for every function
  pipeline   warplint.pipeline.lint_text (front end, CFGs, analyses, checks)
and prints lines, seconds, lines/s and the ratio to ptxas for each, then the share of the
pipeline spent in networkx (the CFG facts: dominators, post-dominators, frontiers, SCCs; from a
cProfile of one run).  `--cu FILE` also times `python -m warplint --no-cache FILE` cold (a fresh
process, start to exit), wall and CPU seconds, best of N.
`--pairs N` also runs ptxas and the pipeline alternately N times and prints the median of the
pairs' ratios (the figure to quote on a shared machine: both halves of a pair see the same load).
Each pipeline run starts as a fresh process would: the in-process memories forgotten and the
garbage of earlier runs collected, untimed (its full collection would otherwise land in a timed
run: 0.26 s of one profiled run).
`--root TREE` measures the warplint of another tree (a `git archive`), e.g. before and after.
"""
from __future__ import annotations

import argparse
import gc
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def generate(arch: str, lineinfo: bool, nvcc: str) -> Path:
    src = HERE / "kernels" / "big.cu"
    out_dir = HERE / "out"
    out_dir.mkdir(exist_ok=True)
    out = out_dir / f"big_{arch}{'' if lineinfo else '_nolines'}.ptx"
    if out.exists() and out.stat().st_mtime >= src.stat().st_mtime:
        return out
    if not shutil.which(nvcc):
        sys.exit(f"bench_ptx: {nvcc} not found (needed to generate {out.name}); pass --ptx FILE")
    cmd = [nvcc, f"-arch={arch}", "-ptx", "-o", str(out) + ".tmp", str(src)]
    if lineinfo:
        cmd.insert(1, "-lineinfo")
    print("generating:", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)
    os.replace(str(out) + ".tmp", out)
    return out


def best_of(n: int, fn, setup=lambda: None) -> float:
    best = float("inf")
    for _ in range(n):
        setup()
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--arch", default="sm_80", help="target for nvcc and ptxas (default sm_80)")
    ap.add_argument("--repeat", "-n", type=int, default=3, help="runs per measurement; the best counts")
    ap.add_argument("--no-lineinfo", action="store_true", help="generate the PTX without -lineinfo")
    ap.add_argument("--ptx", help="benchmark this PTX file instead of generating one")
    ap.add_argument("--nvcc", default="nvcc")
    ap.add_argument("--ptxas", default="ptxas")
    ap.add_argument("--profile", action="store_true", help="print a cProfile of one pipeline run")
    ap.add_argument("--cu", help="also time one cold run of the CLI on this .cu file")
    ap.add_argument("--pairs", type=int, default=0, help="interleaved ptxas/pipeline pairs (median ratio)")
    ap.add_argument("--root", default=str(HERE.parent), help="the warplint tree to measure (default: this one)")
    args = ap.parse_args(argv)
    sys.path.insert(0, os.path.abspath(args.root))

    path = Path(args.ptx) if args.ptx else generate(args.arch, not args.no_lineinfo, args.nvcc)
    text = path.read_text()
    lines = text.count("\n") + (not text.endswith("\n"))

    from warplint.cfg import build_cfg
    from warplint.frontends.ptx import parse_ptx

    module = parse_ptx(text, str(path))
    n_fn = len(module.functions)
    n_ins = sum(len(f.body) for f in module.functions)
    arch = args.arch if not args.ptx else (module.target or args.arch)
    print(f"input: {path} ({lines} lines, {n_fn} functions, {n_ins} instructions+labels, target {arch})")

    rows = []
    if shutil.which(args.ptxas):
        cmd = [args.ptxas, "-O3", f"-arch={arch}", str(path), "-o", os.devnull]
        rows.append(("ptxas -O3", best_of(args.repeat, lambda: subprocess.run(cmd, check=True))))
    else:
        print(f"ptxas: not available ({args.ptxas} not found)")

    rows.append(("parse", best_of(args.repeat, lambda: parse_ptx(text, str(path)))))

    def parse_cfg():
        for f in parse_ptx(text, str(path)).functions:
            build_cfg(f)
    rows.append(("parse+cfg", best_of(args.repeat, parse_cfg)))

    try:
        from warplint.pipeline import lint_text
        from warplint.options import Options
        try:
            from warplint.analysis.lanes import forget_memos
        except ImportError:  # a tree from before the memos
            def forget_memos():
                pass

        def cold():
            """Untimed: each run starts as a fresh process would, with no memory of earlier runs
            and none of their garbage (a full collection of it would land in the timed run)."""
            forget_memos()
            gc.collect()

        def pipeline():
            r = lint_text(text, str(path), Options())
            if r.failed:
                raise RuntimeError("; ".join(d.message for d in r.diagnostics))
            return r
        cold()
        result = pipeline()
        rows.append(("pipeline", best_of(args.repeat, pipeline, cold)))
        print(f"pipeline: {len(result.findings)} findings, {len(result.diagnostics)} diagnostics")
    except Exception as e:  # the analysis may not be there yet
        print(f"pipeline: not available ({type(e).__name__}: {e})")

    base = rows[0][1] if rows and rows[0][0].startswith("ptxas") else None
    print()
    print(f"{'stage':<12} {'lines':>8} {'seconds':>9} {'lines/s':>11} {'vs ptxas':>9}")
    print("-" * 53)
    for name, secs in rows:
        ratio = f"{secs / base:8.2f}x" if base else "      n/a"
        print(f"{name:<12} {lines:>8} {secs:>9.3f} {lines / secs:>11,.0f} {ratio:>9}")
    if any(name == "pipeline" for name, _ in rows):
        print(f"networkx share of the pipeline: {networkx_share(lambda: lint_text(text, str(path))):.1%}")
    if args.pairs and base and any(name == "pipeline" for name, _ in rows):
        ratios = interleaved_pairs(args.pairs, cmd, pipeline, cold)
        print(f"interleaved pairs: median pipeline / ptxas {statistics.median(ratios):.2f}x "
              f"(min {min(ratios):.2f}x, max {max(ratios):.2f}x, {len(ratios)} pairs)")
    if args.cu:
        wall, cpu = cold_cli(args.cu, args.repeat, args.root)
        print(f"cold CLI on {args.cu}: {wall:.3f} s wall, {cpu:.3f} s CPU (best of {args.repeat})")
    if args.profile:
        import cProfile
        import pstats
        prof = cProfile.Profile()
        prof.runcall(lint_text, text, str(path))
        pstats.Stats(prof).sort_stats("cumtime").print_stats(25)
    return 0


def interleaved_pairs(n: int, ptxas_cmd: list[str], pipeline, setup) -> list[float]:
    """Pipeline seconds / ptxas seconds of `n` pairs, each pair run back to back (`setup`
    untimed before each)."""
    ratios = []
    for _ in range(n):
        setup()
        t0 = time.perf_counter()
        subprocess.run(ptxas_cmd, check=True)
        t1 = time.perf_counter()
        pipeline()
        ratios.append((time.perf_counter() - t1) / (t1 - t0))
    return ratios


def networkx_share(run) -> float:
    """The fraction of `run`'s time spent inside networkx functions (cProfile's own times)."""
    import cProfile
    import pstats
    prof = cProfile.Profile()
    prof.runcall(run)
    stats = pstats.Stats(prof).stats
    total = sum(own for _, _, own, _, _ in stats.values())
    nx = sum(own for (file, _, _), (_, _, own, _, _) in stats.items() if f"{os.sep}networkx{os.sep}" in file)
    return nx / total if total else 0.0


def cold_cli(cu: str, repeat: int, root: str) -> tuple[float, float]:
    """Best wall and CPU seconds of `python -m warplint --no-cache FILE` in a fresh process."""
    import resource
    cmd = [sys.executable, "-m", "warplint", "--no-cache", "--no-gitignore", os.path.abspath(cu)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p))
    best_wall = best_cpu = float("inf")
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                       cwd=root or None)  # (`-m` imports the working directory's warplint first)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        best_wall, best_cpu = min(best_wall, wall), min(best_cpu, cpu)
    return best_wall, best_cpu


if __name__ == "__main__":
    sys.exit(main())
