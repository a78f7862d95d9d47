"""Long fuzz run of both front ends and the analysis.

    python bench/fuzz.py [--inputs 100000] [--seconds 600] [--seed 1] [SEED_FILES...]

Mutates real inputs (the bundled fixtures and any files given: nvcc output works well):
truncation, token deletion/duplication/swap, deep nesting, huge literals, NUL bytes,
invalid UTF-8, a 1 MB single line, thousands of labels.  Every input must end in findings
or a located error diagnostic -- never an uncaught exception, never a hang (each input runs
under a time limit in a worker process).  Prints inputs tried, failures, and the slowest.
"""
from __future__ import annotations

import argparse
import os
import random
import re
import sys
import time
import traceback
from concurrent.futures import ProcessPoolExecutor, TimeoutError
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TOKEN = re.compile(rb"\s+|[A-Za-z_%$.][\w.$%]*|0x[0-9a-fA-F]+|\d+|.", re.S)


def mutate(rng: random.Random, data: bytes) -> bytes:
    kind = rng.randrange(12)
    toks = TOKEN.findall(data) or [data]
    if kind == 0:
        return data[: rng.randrange(len(data) + 1)]
    if kind == 1 and toks:
        i = rng.randrange(len(toks))
        return b"".join(toks[:i] + toks[i + 1:])
    if kind == 2 and toks:
        i = rng.randrange(len(toks))
        return b"".join(toks[:i] + [toks[i]] * rng.randint(2, 5) + toks[i:])
    if kind == 3 and len(toks) > 2:
        i, j = rng.randrange(len(toks)), rng.randrange(len(toks))
        toks[i], toks[j] = toks[j], toks[i]
        return b"".join(toks)
    if kind == 4:
        depth = rng.choice([50, 500, 5000])
        return data + b"\n" + b"{" * depth + b"\n" + b"}" * rng.choice([0, depth])
    if kind == 5:
        return data.replace(b"0x", b"0x" + b"f" * rng.choice([20, 200, 5000]), 1)
    if kind == 6:
        i = rng.randrange(len(data) + 1)
        return data[:i] + b"\0" + data[i:]
    if kind == 7:
        i = rng.randrange(len(data) + 1)
        return data[:i] + bytes([0xC3, 0x28, 0xFF]) + data[i:]
    if kind == 8:
        return data + b"\n// " + b"x" * (1 << 20) + b"\n"
    if kind == 9:
        labels = b"".join(b"L%d:\n\tbra L%d;\n" % (i, rng.randrange(3000)) for i in range(3000))
        return data.replace(b"\tret;", labels + b"\tret;", 1)
    if kind == 10:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 400)))
    out = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        if out:
            out[rng.randrange(len(out))] = rng.randrange(256)
    return bytes(out)


def run_one(args):
    data, suffix = args
    import tempfile
    from warplint.engine import lint_file
    from warplint.options import Options
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "fuzz" + suffix)
        with open(p, "wb") as f:
            f.write(data)
        t0 = time.perf_counter()
        try:
            r = lint_file(p, Options(targets=["sm_60", "sm_80"]))
        except Exception:
            return "crash", traceback.format_exc(), time.perf_counter() - t0
        for diag in r.diagnostics:
            if diag.loc is None or diag.loc.line < 1:
                return "unlocated", repr(diag), time.perf_counter() - t0
        return "ok", "", time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("seeds", nargs="*")
    ap.add_argument("--inputs", type=int, default=100_000)
    ap.add_argument("--seconds", type=float, default=600)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    seeds = [Path(s) for s in args.seeds] or sorted(
        p for p in (ROOT / "fixtures").rglob("*") if p.suffix in (".ptx", ".cu") and p.stat().st_size < 200_000)
    corpus = [(p.read_bytes(), p.suffix) for p in seeds]
    rng = random.Random(args.seed)
    tried = failures = 0
    slowest = (0.0, None)
    start = time.time()
    with ProcessPoolExecutor(args.jobs) as pool:
        while tried < args.inputs and time.time() - start < args.seconds:
            batch = []
            for _ in range(min(64, args.inputs - tried)):
                data, suffix = rng.choice(corpus)
                for _ in range(rng.randint(1, 3)):
                    data = mutate(rng, data)
                batch.append((data, suffix))
            futures = [pool.submit(run_one, b) for b in batch]
            for b, fut in zip(batch, futures):
                tried += 1
                try:
                    status, info, secs = fut.result(timeout=args.timeout)
                except TimeoutError:
                    status, info, secs = "timeout", f"{len(b[0])} bytes", args.timeout
                if secs > slowest[0]:
                    slowest = (secs, b[1])
                if status != "ok":
                    failures += 1
                    out = ROOT / "bench" / "out" / f"fuzz-fail-{failures}{b[1]}"
                    out.parent.mkdir(parents=True, exist_ok=True)
                    out.write_bytes(b[0])
                    print(f"FAIL {status}: {out}\n{info[-2000:]}", flush=True)
    print(f"inputs tried: {tried}, failures: {failures}, slowest input: {slowest[0]:.2f} s, "
          f"elapsed {time.time() - start:.0f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
