"""Pre-commit batches: the marginal cost of one more 300-line `.cu` file in one warplint process.

    python bench/bench_batch.py [--files 20] [--runs 3] [--jobs 1]

pre-commit hands all the changed files to one process.  This writes N copies of
bench_latency.py's 300-line file under distinct names, then times `python -m warplint` on
one copy and on all N (median of `--runs`, alternating), and prints the marginal cost per file,
(T(N) - T(1)) / (N - 1), in wall and CPU time (the processes' user + system), for:

- same text: the copies are byte-identical (a file copied around a tree; each process starts
  with an empty result cache, so the first copy is analysed and the others are cache hits);
- own text: each copy's kernels are renamed (new code in every file), `--no-cache`: every file
  is analysed, and the in-process memories of texts (warplint/memo.py) only help where a text
  repeats (none does here but the shape of the code).

Target (issue 17): <= 20 ms per file.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_latency import child_env, make_file  # noqa: E402  (bench/ is no package)

ROOT = Path(__file__).resolve().parent.parent


def timed_run(cmd: list[str], env: dict) -> tuple[float, float]:
    """(wall, CPU) seconds of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def write_copies(folder: Path, n: int, own_text: bool) -> list[str]:
    seed = folder / "seed.cu"
    make_file(seed)
    text = seed.read_text()
    seed.unlink()
    paths = []
    for i in range(n):
        p = folder / f"kernels_{i}.cu"
        p.write_text(text.replace("void k", f"void copy{i}_k") if own_text else text)
        paths.append(str(p))
    return paths


def measure(label: str, files: list[str], extra: list[str], args, env: dict, scratch: Path) -> None:
    one, batch = [], []
    for run in range(args.runs):
        for group, out in (([files[0]], one), (files, batch)):
            run_env = dict(env, WARPLINT_CACHE_DIR=str(scratch / f"cache-{label}-{run}-{len(group)}"))
            out.append(timed_run([sys.executable, "-m", "warplint", "-j", str(args.jobs), *extra, *group], run_env))
    n = len(files)
    for i, kind in ((0, "wall"), (1, "CPU")):
        t1 = statistics.median(r[i] for r in one)
        tn = statistics.median(r[i] for r in batch)
        print(f"{label:9} {kind:4}: 1 file {t1:6.3f} s, {n} files {tn:6.3f} s, "
              f"marginal {1000 * (tn - t1) / (n - 1):6.1f} ms per file (target <= 20 ms)")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=20)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=1)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        scratch = Path(d)
        env = child_env(scratch)
        for own_text in (False, True):
            folder = scratch / ("own" if own_text else "same")
            folder.mkdir()
            files = write_copies(folder, args.files, own_text)
            subprocess.run([sys.executable, "-m", "warplint", "--no-cache", files[0]], env=env, cwd=ROOT,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # bytecode written
            label = "own text" if own_text else "same text"
            measure(label, files, ["--no-cache"] if own_text else [], args, env, scratch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
