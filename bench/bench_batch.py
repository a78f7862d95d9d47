"""Pre-commit batches: the marginal cost of one more 300-line `.cu` file in one warplint process.

    python bench/bench_batch.py [--files 20] [--runs 3] [--jobs 1] [--scenario "shared header"]

pre-commit hands all the changed files to one process.  This writes N copies of
bench_latency.py's 300-line file under distinct names, then times `python -m warplint` on
one copy and on all N (median of `--runs`, alternating), and prints the marginal cost per file,
(T(N) - T(1)) / (N - 1), in wall and CPU time (the processes' user + system), for:

- same text: the copies are byte-identical (a file copied around a tree; each process starts
  with an empty result cache, so the first copy is analysed and the others are cache hits);
- own text: each copy's kernels are renamed (new code in every file), `--no-cache`: every file
  is analysed, and the in-process memories of texts (warplint/memo.py) only help where a text
  repeats (none does here but the shape of the code);
- shared header: as own text, and every file includes one header of ~150 lines of device
  functions that no kernel calls (a project's warp utilities: not the file's code, so no file
  parses or analyses them: frontends/cuda/scope.py).

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

HEADER = "warp_utils.cuh"
DEVICE_FUNCTIONS = """
__device__ float warp_reduce{i}(float v, unsigned mask) {{
  for (int off = 16; off > 0; off /= 2)
    v += __shfl_down_sync(mask, v, off);
  return v;
}}
__device__ float segment_scan{i}(float v, int width) {{
  unsigned lane = threadIdx.x % 32;
  for (int off = 1; off < width; off *= 2) {{
    float u = __shfl_up_sync(0xffffffff, v, off, width);
    if (lane % width >= off)
      v += u;
  }}
  return v;
}}
__device__ int first_voter{i}(bool p) {{
  unsigned b = __ballot_sync(0xffffffff, p);
  return b ? __ffs(b) - 1 : 32;
}}
__device__ float broadcast_if{i}(float v, int n) {{
  if (threadIdx.x % 32 < n)
    v = __shfl_sync(0xffffffff, v, 0);
  return v;
}}
"""


def timed_run(cmd: list[str], env: dict) -> tuple[float, float]:
    """(wall, CPU) seconds of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def write_copies(folder: Path, n: int, own_text: bool, header: bool = False) -> list[str]:
    seed = folder / "seed.cu"
    make_file(seed)
    text = seed.read_text()
    seed.unlink()
    if header:
        (folder / HEADER).write_text("#pragma once\n" + "".join(DEVICE_FUNCTIONS.format(i=i) for i in range(6)))
        text = f'#include "{HEADER}"\n' + text
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
        print(f"{label:13} {kind:4}: 1 file {t1:6.3f} s, {n} files {tn:6.3f} s, "
              f"marginal {1000 * (tn - t1) / (n - 1):6.1f} ms per file (target <= 20 ms)")


SCENARIOS = ("same text", "own text", "shared header")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=20)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--scenario", action="append", choices=SCENARIOS, help="only these (default: all)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        scratch = Path(d)
        env = child_env(scratch)
        for label in args.scenario or SCENARIOS:
            folder = scratch / label.replace(" ", "-")
            folder.mkdir()
            files = write_copies(folder, args.files, label != "same text", header=label == "shared header")
            subprocess.run([sys.executable, "-m", "warplint", "--no-cache", files[0]], env=env, cwd=ROOT,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # bytecode written
            measure(label, files, ["--no-cache"] if label != "same text" else [], args, env, scratch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
