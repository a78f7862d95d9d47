"""Real-world parse rate of the CUDA-C front end.

    python bench/parse_rate.py DIR [DIR ...] [--verbose] [--target sm_70]

Every directory is one repository; every .cu/.cuh under it is parsed with `parse_cuda`.
Per repository: files, files parsed with no note, functions (__global__/__device__) found,
functions analysed without a note, kernels found/analysed, and the percentages.
Functions that come from an included header are counted with the header, not the includer.
"""
from __future__ import annotations

import argparse
import collections
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from warplint.errors import InputError  # noqa: E402
from warplint.frontends.cuda import parse_cuda  # noqa: E402
from warplint.options import Options  # noqa: E402


def _pct(a, b):
    return f"{100.0 * a / b:5.1f}%" if b else "   - "


def _is_kernel_at(lines, loc, path) -> bool:
    if os.path.abspath(loc.path) != os.path.abspath(path):
        return False
    lo = max(0, loc.line - 4)
    return any("__global__" in ln for ln in lines[lo:loc.line])


def run_repo(root: str, options: Options, verbose: bool, reasons: collections.Counter):
    files = clean = funcs = funcs_ok = kernels = kernels_ok = errors = 0
    worst = 0.0
    for dirpath, _, names in os.walk(root):
        for n in sorted(names):
            if not n.endswith((".cu", ".cuh")):
                continue
            p = os.path.join(dirpath, n)
            try:
                text = open(p, encoding="utf-8", errors="replace").read().replace("\0", " ")
            except OSError:
                continue
            files += 1
            t0 = time.perf_counter()
            try:
                m = parse_cuda(text, p, options)
            except InputError as e:
                errors += 1
                reasons["InputError: " + e.message[:60]] += 1
                if verbose:
                    print(f"  {e.loc}: error: {e.message}")
                continue
            worst = max(worst, time.perf_counter() - t0)
            notes = [d for d in m.diagnostics if d.severity == "note"]
            if not notes:
                clean += 1
            own = [f for f in m.functions if f.loc is None or os.path.abspath(f.loc.path) == os.path.abspath(p)]
            ok_k = sum(1 for f in own if f.is_kernel)
            ok_d = len(own) - ok_k
            lines = text.splitlines()
            bad_k = sum(1 for d in notes if "not analysed" in d.message and _is_kernel_at(lines, d.loc, p))
            bad = sum(1 for d in notes if "not analysed" in d.message)
            kernels += ok_k + bad_k
            kernels_ok += ok_k
            funcs += ok_k + ok_d + bad
            funcs_ok += ok_k + ok_d
            for d in notes:
                msg = d.message.split(": ", 1)[-1]
                reasons[msg[:70]] += 1
                if verbose:
                    print(f"  {d.loc}: note: {d.message}")
    return dict(files=files, clean=clean, funcs=funcs, funcs_ok=funcs_ok, kernels=kernels,
                kernels_ok=kernels_ok, errors=errors, worst=worst)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--verbose", "-v", action="store_true")
    ap.add_argument("--target", default=None)
    ap.add_argument("--reasons", type=int, default=12, help="show the N most common reasons")
    a = ap.parse_args(argv)
    options = Options(targets=[a.target] if a.target else None)
    reasons: collections.Counter = collections.Counter()
    rows = []
    t0 = time.perf_counter()
    for d in a.dirs:
        if a.verbose:
            print(d)
        rows.append((os.path.basename(os.path.normpath(d)), run_repo(d, options, a.verbose, reasons)))
    total = collections.Counter()
    for _, r in rows:
        total.update({k: v for k, v in r.items() if k != "worst"})
    rows.append(("TOTAL", dict(total, worst=max((r["worst"] for _, r in rows), default=0.0))))
    head = f"{'repository':28} {'files':>5} {'clean':>6} {'errors':>6} {'kernels':>7} {'analysed':>8} {'funcs':>6} {'analysed':>8} {'slowest':>8}"
    print(head)
    print("-" * len(head))
    for name, r in rows:
        print(f"{name[:28]:28} {r['files']:5} {_pct(r['clean'], r['files']):>6} {r['errors']:6} "
              f"{r['kernels']:7} {_pct(r['kernels_ok'], r['kernels']):>8} {r['funcs']:6} "
              f"{_pct(r['funcs_ok'], r['funcs']):>8} {r['worst'] * 1000:6.0f}ms")
    print(f"\n{time.perf_counter() - t0:.1f}s total")
    if a.reasons and reasons:
        print("\nmost common reasons:")
        for msg, n in reasons.most_common(a.reasons):
            print(f"  {n:5}  {msg}")


if __name__ == "__main__":
    main()
