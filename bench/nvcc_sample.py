"""The combined route on a small corpus sample (issue 16): `--via-nvcc=auto` (or `--via-nvcc`
with --always) with a compile database generated for each file (its repository's include
folders, -std=c++17, one target).  Compiling needs whole repository trees (bench/README.md's
snapshots extracted with `git archive`), not the extracted `.corpus/` files alone.

    python bench/nvcc_sample.py TREES REPO/PATH ... [--always] [--target sm_80] [--timeout 300]

Per file: the route taken (direct, compiled, or direct after a failed compile and why), functions
with warp primitives fully analysed (bench/realworld.py's count), where the warp instructions
(`--show-masks` entries) and findings are reported (the linted file, another file of the tree,
no frame in the tree: left at a PTX line / dropped as library-only) and the wall time of the
process.  The databases are written under a temporary folder, never in
the corpus or the repository.  Prints a Markdown table and the totals.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import realworld  # noqa: E402

HEADER_DIRS = ("include", "includes", "csrc", "src", "common", "kernels")
DROPPED = re.compile(r"^(\d+) finding\(s\) in compiled code with no source line")


def include_dirs(repo_dir: str, rel: str) -> list[str]:
    """The repository root, the file's folder and its parents, and every folder named like an
    include root: what a build of an extracted tree would roughly pass."""
    out = [repo_dir]
    d = os.path.dirname(os.path.join(repo_dir, rel))
    while d.startswith(repo_dir) and d != repo_dir:
        out.append(d)
        d = os.path.dirname(d)
    for base, dirs, _ in os.walk(repo_dir):
        out += [os.path.join(base, x) for x in dirs if x in HEADER_DIRS]
    return sorted(set(out))


def write_database(repo_dir: str, rel: str, target: str, where: str, system: list[str]) -> str:
    args = ["nvcc", "-std=c++17", "--expt-relaxed-constexpr", "--extended-lambda", f"-arch={target}"]
    args += [f"-I{d}" for d in include_dirs(repo_dir, rel)] + [f"-isystem{d}" for d in system]
    args += ["-c", rel, "-o", "out.o"]
    path = os.path.join(where, "compile_commands.json")
    with open(path, "w") as f:
        json.dump([{"directory": repo_dir, "file": rel, "arguments": args}], f)
    return path


def run(repo_dir: str, rel: str, db: str, timeout: float, route: str) -> dict:
    cmd = [sys.executable, "-m", "warplint", route, "--compile-commands", db, "--show-masks",
           "--format", "json", "--no-cache", "--no-gitignore", "-j", "1", rel]
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, cwd=repo_dir, capture_output=True, text=True, timeout=timeout,
                           env={**os.environ, "PYTHONPATH": realworld.ROOT})
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "seconds": time.perf_counter() - t0, "report": {}, "route": route}
    report = json.loads(p.stdout) if p.stdout.startswith("{") else {}
    return {"status": "ok" if report else "crash", "seconds": time.perf_counter() - t0, "report": report,
            "stderr": p.stderr[-1500:], "route": route}


def measure(repo_dir: str, rel: str, target: str, timeout: float, route: str, system: list[str]) -> dict:
    with open(os.path.join(repo_dir, rel), encoding="utf-8", errors="replace") as f:
        text = f.read()
    functions = [fn for fn in realworld.scan_functions(text) if fn.primitives]
    live = realworld.active_lines(text, os.path.join(repo_dir, rel))  # as bench/realworld.py counts
    if live is not None:
        for fn in functions:
            for p in fn.primitives:
                p.active = any(ln in live for ln in range(p.line, p.end_line + 1))
        functions = [fn for fn in functions if any(p.active for p in fn.primitives)]
    with tempfile.TemporaryDirectory(prefix="warplint-db-") as where:
        r = run(repo_dir, rel, write_database(repo_dir, rel, target, where, system), timeout, route)
    report = r["report"]
    shown, analysed, notes = [], set(), []
    for masks in realworld.mask_texts(report.get("masks")):
        realworld.parse_masks_text(masks, shown, analysed, notes)
    result = {"status": r["status"], "shown": shown, "analysed": sorted(analysed),
              "diagnostics": report.get("diagnostics", [])}
    realworld.classify(functions, os.path.normpath(rel), result, text.split("\n"))
    messages = [d["message"] for d in result["diagnostics"]]
    route = "direct" if r["route"] == "--via-nvcc=auto" else "compiled"
    errors = [d["message"] for d in result["diagnostics"] if d["severity"] == "error"]
    if errors:
        route = "error: " + errors[0][:70]
    for m in messages:
        if m.startswith("--via-nvcc=auto: compiled"):
            route = "compiled"
        elif m.startswith("--via-nvcc=auto: not compiled"):
            route = "direct (compile failed: " + m.split("nvcc: ", 1)[-1][:70] + ")"
    here = os.path.normpath(rel)
    findings = report.get("findings", [])
    return {
        "file": rel, "route": route, "seconds": r["seconds"], "functions": len(functions),
        "full": sum(fn.status == "full" for fn in functions),
        "instr_here": sum(os.path.normpath(p) == here for p, _, _ in shown),
        "instr_elsewhere": sum(os.path.normpath(p) != here and not p.endswith(".ptx") for p, _, _ in shown),
        "instr_library": sum(p.endswith(".ptx") for p, _, _ in shown),  # no frame in the linted tree
        "findings_here": sum(os.path.normpath(f["path"]) == here for f in findings),
        "findings_elsewhere": sum(os.path.normpath(f["path"]) != here for f in findings),
        "findings_dropped": sum(int(m[1]) for m in map(DROPPED.match, messages) if m),
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("corpus")
    p.add_argument("files", nargs="+", metavar="REPO/PATH")
    p.add_argument("--target", default="sm_80")
    p.add_argument("--timeout", type=float, default=300.0)
    p.add_argument("--isystem", action="append", default=[], metavar="DIR",
                   help="a library's headers for every file (e.g. cuBLAS/cuRAND from their Python wheels)")
    p.add_argument("--always", action="store_true", help="compile every file (--via-nvcc), not only where needed")
    a = p.parse_args(argv)
    rows = []
    for spec in a.files:
        repo, rel = spec.split("/", 1)
        row = measure(os.path.abspath(os.path.join(a.corpus, repo)), rel, a.target, a.timeout,
                      "--via-nvcc" if a.always else "--via-nvcc=auto", [os.path.abspath(d) for d in a.isystem])
        rows.append(dict(row, file=spec))
        print(json.dumps(rows[-1]), file=sys.stderr)
    cols = ["file", "route", "functions", "full", "instr_here", "instr_elsewhere", "instr_library", "findings_here",
            "findings_elsewhere", "findings_dropped", "seconds"]
    print("| " + " | ".join(cols) + " |\n|" + "---|" * len(cols))
    for r in rows:
        print("| " + " | ".join(f"{r[c]:.1f}" if c == "seconds" else str(r[c]) for c in cols) + " |")
    times = [r["seconds"] for r in rows]
    total = {c: sum(r[c] for r in rows) for c in cols[2:-1]}
    print(f"\ntotals: {json.dumps(total)}; compiled {sum(r['route'] == 'compiled' for r in rows)} of {len(rows)}; "
          f"seconds p50 {realworld.percentile(times, 0.5):.1f} p95 {realworld.percentile(times, 0.95):.1f} "
          f"max {max(times):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
