"""Memory of one long-running warplint process: RSS after 1, 1,000, 5,000 different inputs.

    python bench/bench_memory.py [--inputs 5000] [--at 1,1000,5000] [--cli] [--warplint-root TREE]

The language server, a `--jobs` worker and bench/fuzz.py's workers lint input after input in one
process.  This lints `--inputs` different small files in turn in this process, nobody calling
`gc.collect()`: the bundled fixtures (`.cu` and `.ptx` under 4 KB), each made distinct (a function
or a comment with the input's number appended), by `pipeline.lint_text` as the server and the
workers do, or with `--cli` by `warplint.cli.main` on the file in a scratch folder, as bench/fuzz.py
does.  After each count of `--at` it prints the resident set (now and peak, MiB), CPU seconds and
the cyclic collector's full collections so far.  `--warplint-root` measures another tree (a `git
archive` of `warplint rules`).
"""
from __future__ import annotations

import argparse
import gc
import io
import os
import resource
import sys
import tempfile
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def small_inputs(n: int):
    """(text, file name) of `n` different small CUDA and PTX files made from the fixtures."""
    seeds = sorted(p for p in (ROOT / "fixtures").rglob("*") if p.suffix in (".cu", ".ptx") and p.stat().st_size < 4000)
    for i in range(n):
        p = seeds[i % len(seeds)]
        extra = f"\n__device__ int unique_{i}(int x) {{ return x + {i}; }}\n" if p.suffix == ".cu" else f"\n// {i}\n"
        yield p.read_text("utf-8") + extra, f"f{i}{p.suffix}"


def rss_mib() -> tuple[float, float]:
    """(resident now, peak) in MiB."""
    with open("/proc/self/statm") as f:
        now = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    return now / 2**20, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def lint_in_process(text: str, name: str) -> None:
    from warplint.pipeline import lint_text
    lint_text(text, name)


def lint_by_cli(text: str, name: str, folder: Path) -> None:
    from warplint.cli import main
    path = folder / name
    path.write_text(text, "utf-8")
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        main(["--no-cache", "--jobs", "1", "--format", "json", str(path)])
    path.unlink()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--inputs", type=int, default=5000)
    ap.add_argument("--at", default="1,1000,5000", help="counts after which to print (comma-separated)")
    ap.add_argument("--cli", action="store_true", help="through warplint.cli.main, as bench/fuzz.py")
    ap.add_argument("--warplint-root", help="the warplint tree to measure (default: this checkout)")
    args = ap.parse_args()
    sys.path.insert(0, str(Path(args.warplint_root or ROOT).resolve()))
    import warplint
    at = {int(x) for x in args.at.split(",")}
    print(f"warplint: {Path(warplint.__file__).parent}, {'cli.main' if args.cli else 'lint_text'}")
    folder = Path(tempfile.mkdtemp(prefix="warplint-memory-"))
    t0 = time.process_time()
    try:
        for n, (text, name) in enumerate(small_inputs(args.inputs), 1):
            if args.cli:
                lint_by_cli(text, name, folder)
            else:
                lint_in_process(text, name)
            if n in at or n == args.inputs:
                now, peak = rss_mib()
                cpu = time.process_time() - t0
                print(f"after {n:>6} inputs: RSS {now:7.1f} MiB (peak {peak:7.1f}), CPU {cpu:7.1f} s, "
                      f"full collections {gc.get_stats()[-1]['collections']}", flush=True)
    finally:
        os.rmdir(folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
