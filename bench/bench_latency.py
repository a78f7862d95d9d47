"""Pre-commit latency: one ~300-line .cu file, process start to exit.

    python bench/bench_latency.py [--runs 10]

Writes a 300-line CUDA file of our own (several kernels with warp primitives), then times
`python -m warplint FILE` end to end (best and median wall time of N runs, and the median CPU
time, user + system, which a loaded machine disturbs less), cold (`--no-cache`) and on a
cache hit, against a bare `python -c pass` and `python -c "import networkx"` of the same run;
and checks that a cache hit, `--version`, `rules` and `--explain` import neither networkx nor
pycparser.
`nvcc --ptx` on the same file is timed for scale when nvcc is installed.

The children run as an installed package does: with bytecode (written once, under a scratch
`PYTHONPYCACHEPREFIX`).  Without it (PYTHONDONTWRITEBYTECODE=1, as some CI images set) every
run compiles warplint's ~60 modules again: about 0.2 s more.
Targets (issue 17): cold <= 0.35 s with networkx imported; cache hit <= 0.08 s.
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

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

HEAVY_MODULES = ("networkx", "pycparser")  # what the commands that lint nothing must not import


def make_file(path: Path, lines: int = 300) -> None:
    parts, i = [], 0
    while sum(p.count("\n") for p in parts) < lines:
        parts.append(KERNEL.format(i=i))
        i += 1
    path.write_text("// generated for the latency benchmark\n" + "".join(parts))


def child_env(scratch: Path) -> dict:
    """The environment of the timed processes: this checkout's warplint, bytecode kept."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(scratch / "pycache")
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def timed(cmd, runs, env) -> tuple[float, float, float]:
    """(best wall, median wall, median CPU) seconds over `runs` runs, after one untimed run."""
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        walls.append(time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return min(walls), statistics.median(walls), statistics.median(cpus)


def heavy_imports(args: list[str], env) -> list[str]:
    """The heavy modules `python -m warplint ARGS` imports (from -X importtime)."""
    p = subprocess.run([sys.executable, "-X", "importtime", "-m", "warplint", *args], env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    names = {line.rsplit("|", 1)[-1].strip() for line in p.stderr.splitlines() if line.startswith("import time:")}
    return [m for m in HEAVY_MODULES if m in names]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        env = child_env(Path(d))
        f = Path(d) / "kernels.cu"
        make_file(f)
        n = f.read_text().count("\n")
        lint = [sys.executable, "-m", "warplint", str(f)]
        env_cache = dict(env, WARPLINT_CACHE_DIR=str(Path(d) / "cache"))
        rows = [
            (f"warplint on a {n}-line .cu, cold", lint + ["--no-cache"], env, "target <= 0.35 s"),
            (f"warplint on a {n}-line .cu, cache hit", lint, env_cache, "target <= 0.08 s"),
            ("bare python start", [sys.executable, "-c", "pass"], env, ""),
            ("python importing networkx", [sys.executable, "-c", "import networkx"], env, ""),
        ]
        for label, cmd, run_env, target in rows:
            best, med, cpu = timed(cmd, args.runs, run_env)
            print(f"{label:40} best {best:.3f} s, median {med:.3f} s, CPU {cpu:.3f} s  {target}")
        if shutil.which("nvcc"):
            best, med, cpu = timed(["nvcc", "--ptx", "-arch=sm_80", str(f), "-o", str(Path(d) / "k.ptx")], 3, env)
            print(f"{'nvcc --ptx on the same file':40} best {best:.3f} s, median {med:.3f} s")
        for cmd, run_env in (([str(f)], env_cache), (["--version"], env), (["rules"], env),
                             (["--explain", "WL001"], env)):
            heavy = heavy_imports(cmd, run_env)
            what = "a cache hit" if run_env is env_cache else "warplint " + " ".join(cmd)
            print(f"{what}: imports {', '.join(heavy) if heavy else 'neither networkx nor pycparser'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
