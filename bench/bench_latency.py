"""Pre-commit latency: one ~300-line .cu file, process start to exit.

    python bench/bench_latency.py [--runs 10]

Writes a 300-line CUDA file of our own (several kernels with warp primitives), then times
`python -m warplint FILE` end to end (best and median of N runs) and, for scale,
`nvcc --ptx` on the same file when nvcc is installed.  Target: <= 0.25 s.
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

KERNEL = """
__global__ void k{i}(float *out, const float *in, int n) {{
  unsigned lane = threadIdx.x % 32;
  float v = in[threadIdx.x];
  if (lane < 16) {{
    v += __shfl_xor_sync(0x0000ffff, v, 8);
  }}
  for (int off = 16; off > 0; off /= 2) {{
    v += __shfl_down_sync(0xffffffff, v, off);
  }}
  unsigned active = __ballot_sync(0xffffffff, v > 0.0f);
  if (v > 0.0f) {{
    v = __shfl_sync(active, v, __ffs(active) - 1);
  }}
  if (threadIdx.x < n) {{
    out[threadIdx.x] = v;
  }}
}}
"""


def make_file(path: Path, lines: int = 300) -> None:
    parts, i = [], 0
    while sum(p.count("\n") for p in parts) < lines:
        parts.append(KERNEL.format(i=i))
        i += 1
    path.write_text("// generated for the latency benchmark\n" + "".join(parts))


def timed(cmd, runs):
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - t0)
    return min(times), statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "kernels.cu"
        make_file(f)
        n = f.read_text().count("\n")
        root = str(Path(__file__).resolve().parent.parent)
        env_cmd = [sys.executable, "-c", f"import sys; sys.path.insert(0, {root!r}); "
                   "from warplint.cli import main; sys.exit(main())", str(f)]
        best, med = timed(env_cmd + ["--no-cache"], args.runs)
        print(f"warplint on a {n}-line .cu, cold: best {best:.3f} s, median {med:.3f} s (target <= 0.25 s)")
        best, med = timed(env_cmd, args.runs)
        print(f"warplint on a {n}-line .cu, warm: best {best:.3f} s, median {med:.3f} s (cache hit)")
        best, med = timed([sys.executable, "-c", "pass"], args.runs)
        print(f"bare python start:          best {best:.3f} s, median {med:.3f} s")
        if shutil.which("nvcc"):
            best, med = timed(["nvcc", "--ptx", "-arch=sm_80", str(f), "-o", str(Path(d) / "k.ptx")], 3)
            print(f"nvcc --ptx on the same file: best {best:.3f} s, median {med:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
