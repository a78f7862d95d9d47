#!/usr/bin/env python3
"""Do two warplint trees give the same results?  (For changes that must not change any: speed.)

    python bench/same_results.py --base HEAD --new DIR          # a revision against a tree
    git diff -- warplint > /tmp/p && python bench/same_results.py --base HEAD --new HEAD --patch /tmp/p

Each tree is a directory holding `warplint/` and `rules/` (a `git archive`, a checkout) or a git
revision of this repository, archived into a temporary directory (`--patch FILE` is applied to the
new one: HEAD with your uncommitted diff, on the same tree state as the base).  Both trees lint
the same inputs with `python -m warplint --show-masks --format json --no-cache --no-gitignore -j 1`:

- every fixture (`fixtures/`, one process per tree, from this checkout's root);
- a fixed sample of real files (`--sample N`, default 40: files with warp primitives picked
  with `--seed` round-robin over the repositories of `--corpus`, default `.corpus/`; each in its
  own process, from its repository's folder, as `bench/realworld.py` runs them), plus `--file
  REPO/PATH` ones.

Compared: stdout, stderr and the exit status, byte for byte.  Runs alternate base and new, so the
times printed (total and per-file ratio new/base) are same-run figures.  Exit status 0 when
every input gives the same output, 1 when one differs (a diff of the first lines is printed),
2 on a usage error.
"""
from __future__ import annotations

import argparse
import difflib
import os
import random
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from realworld import file_has_primitives, list_files  # noqa: E402  (bench/ is no package)

COMMAND = ["--show-masks", "--format", "json", "--no-cache", "--no-gitignore", "-j", "1"]
# `python -m warplint` as run from the tree ROOT: `-m` would put the working directory first on
# sys.path, so that the fixtures' run (from this checkout) imported this checkout, not the tree
RUN_FROM_TREE = "import sys; sys.path.insert(0, sys.argv.pop(1)); from warplint.cli import main; sys.exit(main())"


def tree(spec: str, patch: str | None, workdir: str, name: str) -> str:
    """The directory of the warplint tree `spec` (a directory, or a revision archived here)."""
    if os.path.isdir(spec) and not patch:
        if not os.path.isdir(os.path.join(spec, "warplint")):
            sys.exit(f"same_results: {spec}: no warplint/ in it")
        return os.path.abspath(spec)
    out = os.path.join(workdir, name)
    os.makedirs(out)
    if os.path.isdir(spec):
        subprocess.run(["cp", "-r", os.path.join(spec, "warplint"), os.path.join(spec, "rules"), out], check=True)
    else:
        archive = subprocess.run(["git", "-C", ROOT, "archive", spec, "warplint", "rules"], capture_output=True)
        if archive.returncode:
            sys.exit(f"same_results: git archive {spec}: {archive.stderr.decode().strip()}")
        subprocess.run(["tar", "-x", "-C", out], input=archive.stdout, check=True)
    if patch:
        subprocess.run(["git", "apply", "--include=warplint/*", "--include=rules/*", os.path.abspath(patch)],
                       cwd=out, check=True)
    return out


def lint(root: str, cwd: str, paths: list[str], timeout: float) -> tuple[bytes, float]:
    """Everything a run prints (exit status, stdout, stderr) and its wall seconds."""
    env = {**os.environ, "PYTHONPATH": root}
    t0 = time.perf_counter()
    try:
        p = subprocess.run([sys.executable, "-c", RUN_FROM_TREE, root, *COMMAND, *paths], cwd=cwd, env=env,
                           capture_output=True, timeout=timeout)
        out = b"exit %d\n" % p.returncode + p.stdout + b"\n--- stderr\n" + p.stderr
    except subprocess.TimeoutExpired:
        out = b"timeout\n"
    return out, time.perf_counter() - t0


def corpus_sample(corpus: str, n: int, seed: int) -> list[tuple[str, str]]:
    """`n` files with warp primitives, (repository folder, path in it), round-robin over the
    repositories, each repository's files in a seeded random order."""
    pools = []
    for repo in sorted(os.listdir(corpus)):
        repo_dir = os.path.join(corpus, repo)
        if not os.path.isdir(repo_dir):
            continue
        files = [rel for rel in list_files(repo_dir) if _has_primitives(os.path.join(repo_dir, rel))]
        random.Random(f"{seed}:{repo}").shuffle(files)
        pools.append([(repo_dir, rel) for rel in files])
    picked = []
    while len(picked) < n and any(pools):
        for pool in pools:
            if pool and len(picked) < n:
                picked.append(pool.pop())
    return picked


def _has_primitives(path: str) -> bool:
    with open(path, encoding="utf-8", errors="replace") as f:
        return file_has_primitives(f.read())


def compare(name: str, base: bytes, new: bytes) -> bool:
    if base == new:
        return True
    print(f"DIFFERS: {name}")
    diff = difflib.unified_diff(base.decode(errors="replace").splitlines(), new.decode(errors="replace").splitlines(),
                                "base", "new", lineterm="", n=1)
    for i, line in enumerate(diff):
        if i == 40:
            print("  ...")
            break
        print("  " + line)
    return False


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", required=True, help="tree directory or git revision")
    ap.add_argument("--new", required=True, help="tree directory or git revision")
    ap.add_argument("--patch", help="a diff applied to the new tree (its warplint/ and rules/ parts)")
    ap.add_argument("--corpus", default=os.path.join(ROOT, ".corpus"))
    ap.add_argument("--sample", type=int, default=40, help="real files from the corpus (0: none)")
    ap.add_argument("--seed", type=int, default=17)
    ap.add_argument("--file", action="append", default=[], metavar="REPO/PATH",
                    help="also this corpus file (repeatable), e.g. NVIDIA+nccl/src/device/common.h")
    ap.add_argument("--no-fixtures", action="store_true")
    ap.add_argument("--timeout", type=float, default=300)
    args = ap.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="same_results.") as work:
        base = tree(args.base, None, work, "base")
        new = tree(args.new, args.patch, work, "new")
        runs: list[tuple[str, str, list[str]]] = []  # (name, cwd, paths)
        if not args.no_fixtures:
            fixtures = sorted(os.path.relpath(os.path.join(d, f), ROOT)
                              for d, _, fs in os.walk(os.path.join(ROOT, "fixtures")) for f in fs
                              if f.endswith((".cu", ".cuh", ".ptx")))
            runs.append((f"fixtures/ ({len(fixtures)} files, one process)", ROOT, fixtures))
        picked = corpus_sample(args.corpus, args.sample, args.seed) if args.sample else []
        for spec in args.file:
            repo, _, rel = spec.partition("/")
            picked.append((os.path.join(args.corpus, repo), rel))
        runs += [(f"{os.path.basename(d)}/{rel}", d, [rel]) for d, rel in picked]

        same = 0
        total = {"base": 0.0, "new": 0.0}
        for name, cwd, paths in runs:
            out_base, t_base = lint(base, cwd, paths, args.timeout)
            out_new, t_new = lint(new, cwd, paths, args.timeout)
            total["base"] += t_base
            total["new"] += t_new
            print(f"{t_base:8.2f} s {t_new:8.2f} s  {t_new / t_base:5.2f}x  {name}", flush=True)
            same += compare(name, out_base, out_new)
        print(f"\nsame output: {same} of {len(runs)} runs; seconds base {total['base']:.1f}, "
              f"new {total['new']:.1f} ({total['new'] / max(total['base'], 1e-9):.2f}x)")
        return 0 if same == len(runs) else 1


if __name__ == "__main__":
    sys.exit(main())
