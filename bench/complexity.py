#!/usr/bin/env python3
"""Worst-case input families: time and peak memory of the CLI at growing sizes.

    python bench/complexity.py [--family NAME ...] [--timeout 60] [--max-size N] [--list]

Each family is an input shape that once made the analysis super-linear (issue 10, item 5).
Every size is generated into a temporary directory and linted by `python -m warplint --no-cache`
in its own process (address space capped at 4 GiB so a runaway cannot take the machine down).
One table per family: size, seconds (wall clock, and CPU time of the process), peak RSS, findings, whether a work-bound note was
printed.  A row over 10 s or 1 GiB, or one that exits 2 (not analysed), is flagged `!!`; a family stops growing after such a row.

With matplotlib (`pip install warplint[bench]`), a chart of CPU time against size, one panel per
family with the straight line through its largest size for comparison, is written to `--chart`
(default bench/out/complexity.png); without it the tables are printed all the same.
"""
from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TIME_LIMIT_S = 10.0
RSS_LIMIT = 1 << 30
AS_LIMIT = 4 << 30
BOUND_NOTE = re.compile(r": note: .*(work bound|approximate|budget|more than \d+)")
FINDINGS = re.compile(r"^(\d+) findings? \(", re.M)

PTX_HEAD = ".version 7.0\n.target sm_70\n.address_size 64\n\n"
# one finding the families carry along: a full-mask ballot run by lanes 0-15 only
CUDA_HALF = "  if (lane < 16) d[1] = __ballot_sync(0xffffffff, v);\n"
CUDA_HEAD = ("__global__ void k(unsigned *d, int n)\n{\n"
             "  unsigned lane = threadIdx.x % 32;\n  unsigned v = d[threadIdx.x];\n" + CUDA_HALF)
CUDA_TAIL = CUDA_HALF + "  d[threadIdx.x] = v;\n}\n"


# -- generators: size -> {file name: text}; the first file is the one linted ---------------

def nested_loops(n: int) -> dict:
    """n nested lane-strided loops, a full-mask shuffle in the innermost one."""
    body = "".join(f"for (int i{j} = lane; i{j} < n + {j}; i{j} += 32) {{\n" for j in range(n))
    body += "v += __shfl_xor_sync(0xffffffff, v, 1);\n" + "}\n" * n
    return {"k.cu": CUDA_HEAD + body + CUDA_TAIL}


def gotos(n: int) -> dict:
    """n forward gotos, each under a lane-dependent condition, to the next label."""
    body = "".join(f"  if (d[lane + {j}] > {j}) goto L{j + 1};\n  v += {j};\nL{j}:\n  v ^= lane;\n"
                   for j in range(n))
    return {"k.cu": CUDA_HEAD + body + f"L{n}:\n" + CUDA_TAIL}


def breaks(n: int) -> dict:
    """n data-dependent breaks out of one lane-strided loop."""
    body = "  for (int i = lane; i < n; i += 32) {\n"
    body += "".join(f"    if (d[i] == {j}) break;\n    v += d[i + {j}];\n" for j in range(n))
    body += "    v = __shfl_sync(0xffffffff, v, 0);\n  }\n"
    return {"k.cu": CUDA_HEAD + body + CUDA_TAIL}


def switch(n: int) -> dict:
    """One switch on a per-lane value with n cases."""
    body = "  switch (d[lane]) {\n" + "".join(f"  case {j}: v += {j}; break;\n" for j in range(n))
    return {"k.cu": CUDA_HEAD + body + "  }\n" + CUDA_TAIL}


def _ptx_kernel(name: str, body: str, regs: int = 8) -> str:
    return (f".visible .entry {name}(.param .u64 p)\n{{\n"
            f"  .reg .pred %p<{regs}>;\n  .reg .b32 %r<{regs}>;\n  .reg .b64 %rd<4>;\n"
            "  ld.param.u64 %rd1, [p];\n  mov.u32 %r1, %tid.x;\n  and.b32 %r2, %r1, 31;\n"
            "  setp.lt.u32 %p1, %r2, 16;\n"
            "  @!%p1 bra $Lhalf;\n  vote.sync.ballot.b32 %r3, %p1, -1;\n"
            "$Lhalf:\n  st.global.u32 [%rd1], %r2;\n"
            + body + "  ret;\n}\n")


def ptx_branches(n: int) -> dict:
    """n lane-dependent branches, each to a label further down."""
    body = ["  ld.param.u64 %rd1, [p];\n"]
    for j in range(n):
        body.append(f"  ld.global.u32 %r4, [%rd1+{4 * j}];\n  setp.gt.u32 %p2, %r4, %r2;\n"
                    f"  @%p2 bra $L{j + 1 + j % 3};\n  add.u32 %r5, %r5, {j};\n$L{j}:\n")
    body.append("".join(f"$L{j}:\n" for j in range(n, n + 3)))
    body.append("  vote.sync.ballot.b32 %r3, %p1, -1;\n")
    return {"k.ptx": PTX_HEAD + _ptx_kernel("k", "".join(body))}


def ptx_back_edges(n: int) -> dict:
    """One loop with n lane-dependent back edges to its header."""
    body = ["  ld.param.u64 %rd1, [p];\n$Lhead:\n  vote.sync.ballot.b32 %r3, %p1, -1;\n"]
    for j in range(n):
        body.append(f"  ld.global.u32 %r4, [%rd1+{4 * j}];\n  setp.gt.u32 %p2, %r4, %r2;\n"
                    f"  @%p2 bra $Lhead;\n  add.u32 %r5, %r5, {j};\n")
    return {"k.ptx": PTX_HEAD + _ptx_kernel("k", "".join(body))}


def loop_votes(n: int) -> dict:
    """One loop with n lane-dependent back edges and a full-mask vote before each."""
    body = ["$Lhead:\n"]
    for j in range(n):
        body.append(f"  vote.sync.ballot.b32 %r3, %p1, -1;\n  ld.global.u32 %r4, [%rd1+{4 * j}];\n"
                    f"  setp.gt.u32 %p2, %r4, %r2;\n  @%p2 bra $Lhead;\n")
    return {"k.ptx": PTX_HEAD + _ptx_kernel("k", "".join(body))}


def live_registers(n: int) -> dict:
    """n registers defined up front and used after a chain of lane-dependent branches."""
    body = [f"  mul.lo.u32 %r{8 + j}, %r1, {j + 3};\n" for j in range(n)]
    for j in range(n):
        body.append(f"  setp.gt.u32 %p2, %r{8 + j}, {j};\n  @%p2 bra $L{j};\n"
                    f"  add.u32 %r5, %r5, {j};\n$L{j}:\n")
    body += [f"  add.u32 %r5, %r5, %r{8 + j};\n" for j in range(n)]
    body.append("  vote.sync.ballot.b32 %r3, %p1, -1;\n")
    return {"k.ptx": PTX_HEAD + _ptx_kernel("k", "".join(body), regs=n + 16)}


def ptx_kernels(n: int) -> dict:
    """n kernels in one PTX file."""
    return {"k.ptx": PTX_HEAD + "".join(_ptx_kernel(f"k{j}", "") for j in range(n))}


# a second kernel that uses what the family defines, so that the first one's findings show
# whether the rest of the file is still analysed
CUDA_USER = "__global__ void m(unsigned *d)\n{{\n  d[threadIdx.x] = {expr};\n}}\n"


def macros(n: int) -> dict:
    """Function-like macros, each expanding the previous one twice (2^n tokens)."""
    defs = "#define F0(x) (x + 1)\n" + "".join(f"#define F{j}(x) (F{j - 1}(x) * F{j - 1}(x))\n"
                                             for j in range(1, n + 1))
    return {"k.cu": defs + CUDA_HEAD + CUDA_TAIL + CUDA_USER.format(expr=f"F{n}(d[0])")}


def includes(n: int) -> dict:
    """An include tree where each header includes the next one twice (2^n inclusions)."""
    files = {"k.cu": '#include "h0.cuh"\n' + CUDA_HEAD + CUDA_TAIL + CUDA_USER.format(expr="X")}
    for j in range(n):
        files[f"h{j}.cuh"] = f'#include "h{j + 1}.cuh"\n' * 2
    files[f"h{n}.cuh"] = "#define X 0\n"
    return files


def findings(n: int) -> dict:
    """n findings in one file (one legacy vote per line)."""
    lines = "".join(f"  v += __any(v > {j});\n" for j in range(n))
    return {"k.cu": CUDA_HEAD + lines + CUDA_TAIL}


FAMILIES = {
    "nested_loops": (nested_loops, [2, 4, 8, 13, 20, 40]),
    "gotos": (gotos, [5, 10, 20, 30, 60, 200]),
    "breaks": (breaks, [10, 30, 100, 300]),
    "switch": (switch, [100, 1000, 3000, 5000]),
    "ptx_branches": (ptx_branches, [10, 30, 100, 300, 1000]),
    "ptx_back_edges": (ptx_back_edges, [10, 30, 100, 300, 1000]),
    "loop_votes": (loop_votes, [10, 30, 100, 300, 1000]),
    "live_registers": (live_registers, [100, 1000, 3000, 5000]),
    "ptx_kernels": (ptx_kernels, [100, 300, 1000, 3000]),
    "macros": (macros, [5, 10, 15, 20, 30]),
    "includes": (includes, [5, 10, 15, 20]),
    "findings": (findings, [100, 1000, 3000]),
}


# -- running --------------------------------------------------------------------------------

def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT, AS_LIMIT))


def run_cli(path: Path, timeout: float) -> dict:
    """Lint one file in a fresh process: seconds, peak RSS in bytes, findings, note, exit status."""
    cmd = [sys.executable, "-m", "warplint", "--no-cache", "--jobs", "1", path.name]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, cwd=path.parent, stdout=out, stderr=err, env=env,
                                preexec_fn=_limit_memory)
        status, rusage, timed_out = None, None, False
        while status is None:
            pid, st, ru = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                status, rusage = st, ru
            elif time.perf_counter() - t0 > timeout:
                proc.kill()
                _, status, rusage = os.wait4(proc.pid, 0)
                timed_out = True
            else:
                time.sleep(0.01)
        proc.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    m = FINDINGS.search(stderr) or FINDINGS.search(stdout)
    return {"seconds": seconds, "cpu": rusage.ru_utime + rusage.ru_stime, "rss": rusage.ru_maxrss * 1024, "timed_out": timed_out,
            "findings": int(m.group(1)) if m else None, "note": bool(BOUND_NOTE.search(stderr)),
            "rc": proc.returncode}


def run_family(name: str, timeout: float, max_size: int | None) -> list[dict]:
    make, sizes = FAMILIES[name]
    rows = []
    print(f"\n{name}: {make.__doc__}")
    print(f"  {'size':>6} {'seconds':>8} {'cpu s':>7} {'peak RSS':>9} {'findings':>8} {'bound note':>10} {'exit':>4}")
    for n in sizes:
        if max_size is not None and n > max_size:
            break
        with tempfile.TemporaryDirectory(prefix="wl-complexity-") as tmp:
            files = make(n)
            for fname, text in files.items():
                Path(tmp, fname).write_text(text)
            row = run_cli(Path(tmp, next(iter(files))), timeout)
        row["size"] = n
        rows.append(row)
        bad = _bad(row)
        secs = f">{timeout:.0f}" if row["timed_out"] else f"{row['seconds']:.2f}"
        found = "-" if row["findings"] is None else row["findings"]
        print(f"  {n:>6} {secs:>8} {row['cpu']:>7.2f} {row['rss'] / 2**20:>7.0f}Mi {found:>8} "
              f"{'yes' if row['note'] else 'no':>10} {row['rc']:>4}{'  !!' if bad else ''}", flush=True)
        if bad:
            break
    return rows


def _bad(row) -> bool:
    """Too slow, too big, or a tool error (exit 2: the size was not measured at all)."""
    return row["timed_out"] or row["seconds"] > TIME_LIMIT_S or row["rss"] > RSS_LIMIT or row["rc"] == 2


def chart(results: dict[str, list[dict]], path: Path) -> str:
    """Draw CPU seconds against size, a panel per family, with the line through the origin and
    the largest size (linear growth lies on it; start-up time puts small sizes above it).
    Returns what was done, in words."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "no chart: matplotlib is not installed (pip install warplint[bench])"
    names = [n for n, rows in results.items() if rows]
    cols = max(1, min(4, len(names)))
    nrows = max(1, (len(names) + cols - 1) // cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(4 * cols, 3 * nrows), squeeze=False)
    for ax, name in zip(axes.flat, names):
        sizes = [r["size"] for r in results[name]]
        cpu = [r["cpu"] for r in results[name]]
        ax.plot(sizes, cpu, "o-", label="CPU s")
        ax.plot([0, sizes[-1]], [0, cpu[-1]], "--", color="grey", label="linear")
        ax.set_title(name, fontsize=10)
        ax.set_xlabel("size")
        ax.set_ylabel("CPU s")
    for ax in list(axes.flat)[len(names):]:
        ax.axis("off")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return f"chart: {path}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--family", action="append", choices=sorted(FAMILIES), help="run only these")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per run (default 60)")
    ap.add_argument("--max-size", type=int, help="skip sizes above N")
    ap.add_argument("--list", action="store_true", help="list the families and exit")
    ap.add_argument("--chart", default=str(HERE / "out" / "complexity.png"),
                    help="PNG of time against size per family (needs matplotlib; '' for none)")
    args = ap.parse_args(argv)
    if args.list:
        for name, (make, sizes) in FAMILIES.items():
            print(f"{name:16} {sizes}  {make.__doc__}")
        return 0
    flagged = []
    results = {}
    for name in args.family or FAMILIES:
        rows = results[name] = run_family(name, args.timeout, args.max_size)
        if any(_bad(r) for r in rows):
            flagged.append(name)
    print("\nover 10 s or 1 GiB, or not analysed (exit 2):", ", ".join(flagged) if flagged else "none")
    if args.chart:
        print(chart(results, Path(args.chart)))
    return 1 if flagged else 0


if __name__ == "__main__":
    sys.exit(main())
