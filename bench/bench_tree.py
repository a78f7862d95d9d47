"""A CI-sized tree: >= 500 files linted with all cores.

    python bench/bench_tree.py [--files 600] [--jobs N]

Generates a tree of our own .cu and .ptx files (copies of the bundled fixtures under distinct
names, each with a comment line of its own at the end, so that no copy is a cache hit of
another), then runs `warplint --jobs N --format json` over it, cold (empty cache) and warm
(cache populated), and reports files/s and the peak resident memory of the largest process
(the main one or a worker: each stays under 1 GiB).  The processes keep their bytecode, as an
installed package does (see bench_latency.py).
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from bench_latency import child_env  # noqa: E402  (bench/ is no package)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=600)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    seeds = sorted(p for p in (ROOT / "fixtures").rglob("*") if p.suffix in (".cu", ".ptx"))
    with tempfile.TemporaryDirectory() as d:
        tree = Path(d) / "tree"
        for i in range(args.files):
            src = seeds[i % len(seeds)]
            dst = tree / f"dir{i % 20}" / f"{src.stem}_{i}{src.suffix}"
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(src.read_bytes() + f"\n// copy {i}\n".encode())
        env = dict(child_env(Path(d)), WARPLINT_CACHE_DIR=str(Path(d) / "cache"))
        subprocess.run([sys.executable, "-m", "warplint", "--no-cache", str(seeds[0])], env=env, cwd=ROOT,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # bytecode written
        cmd = [sys.executable, "-m", "warplint", "--jobs", str(args.jobs), "--format", "json",
               "--output", str(Path(d) / "out.json"), str(tree)]
        for label in ("cold", "warm"):
            t0 = time.perf_counter()
            r = subprocess.run(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            dt = time.perf_counter() - t0
            print(f"{label}: {args.files} files in {dt:.2f} s = {args.files / dt:.0f} files/s "
                  f"(exit {r.returncode}, jobs {args.jobs})")
            if r.returncode not in (0, 1):
                print(r.stderr.decode()[-2000:])
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(f"peak RSS of the largest process: {peak:.0f} MiB (limit 1024 MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
