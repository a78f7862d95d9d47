"""Extract the CUDA sources of the real-world corpus from local git snapshots.

    python bench/fetch_corpus.py [--mirror /work/.mirror] [--out .corpus] [--config bench/corpus.toml]

The snapshots are not downloaded here: they were brought in beforehand (in our sessions with the
`fetch` tool, which leaves a bare git directory at MIRROR/<owner>+<name>/repo). This script only
reads them with `git` and writes, for every repository in bench/corpus.toml, its CUDA sources to
OUT/<owner>+<name>/ keeping their relative paths:

- every .cu and .cuh file;
- headers (.h, .hpp, .hxx, .inl, .inc, .cuh) that hold device code or warp primitives;
- nothing under vendored folders (third_party/, 3rdparty/, ...), nothing over 512 KiB, nothing
  the snapshot lists but does not hold (its largest files may be absent).

The extracted code is third-party code: OUT must stay gitignored (.corpus/ is), never commit it.
A repository whose snapshot is missing, or at another commit than corpus.toml pins, is reported;
the commit actually used is written to OUT/<owner>+<name>/.commit.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tomllib

SOURCE_EXT = (".cu", ".cuh")
HEADER_EXT = (".h", ".hpp", ".hxx", ".inl", ".inc", ".cuh")
VENDORED = re.compile(r"(^|/)(third_party|thirdparty|3rdparty|third-party|external|extern|vendor)/", re.I)
MAX_BYTES = 512 * 1024
DEVICE_CODE = re.compile(rb"__device__|__global__|__shfl|__ballot|__syncwarp|__activemask|__syncthreads"
                         rb"|cooperative_groups|tiled_partition|__any_sync|__all_sync|__match_")


def git(gitdir: str, *args: str) -> bytes:
    return subprocess.run(["git", "--git-dir", gitdir, *args], check=True, capture_output=True).stdout


def wanted(path: str) -> bool:
    return path.endswith(SOURCE_EXT + HEADER_EXT) and not VENDORED.search(path)


def extract_repo(name: str, commit: str, mirror: str, out: str) -> tuple[int, str]:
    """(files written, commit used) for one repository."""
    slug = name.replace("/", "+")
    gitdir = os.path.join(mirror, slug, "repo")
    if not os.path.isdir(gitdir):
        raise FileNotFoundError(f"{name}: no snapshot at {gitdir} (bring it in with the fetch tool)")
    head = git(gitdir, "rev-parse", "HEAD").decode().strip()
    rev = commit if commit and _has_commit(gitdir, commit) else head
    if rev != commit:
        print(f"warning: {name}: pinned commit {commit} not in the snapshot; using {head}", file=sys.stderr)
    dest = os.path.join(out, slug)
    shutil.rmtree(dest, ignore_errors=True)
    count = 0
    for line in git(gitdir, "ls-tree", "-r", "-l", rev).decode("utf-8", "replace").splitlines():
        meta, _, path = line.partition("\t")
        mode, kind, blob, size = meta.split()
        if kind != "blob" or mode == "120000" or not size.isdigit() or int(size) > MAX_BYTES or not wanted(path):
            continue
        try:
            data = git(gitdir, "cat-file", "blob", blob)
        except subprocess.CalledProcessError:  # listed but absent from the snapshot
            continue
        if not path.endswith(SOURCE_EXT) and not DEVICE_CODE.search(data):
            continue
        target = os.path.join(dest, path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as f:
            f.write(data)
        count += 1
    os.makedirs(dest, exist_ok=True)
    with open(os.path.join(dest, ".commit"), "w") as f:
        f.write(rev + "\n")
    return count, rev


def _has_commit(gitdir: str, commit: str) -> bool:
    return subprocess.run(["git", "--git-dir", gitdir, "cat-file", "-e", commit + "^{commit}"],
                          capture_output=True).returncode == 0


def main(argv=None) -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", default=os.path.join(here, "corpus.toml"))
    p.add_argument("--mirror", default="/work/.mirror")
    p.add_argument("--out", default=os.path.join(os.path.dirname(here), ".corpus"))
    p.add_argument("repos", nargs="*", help="only these owner/name entries")
    a = p.parse_args(argv)
    with open(a.config, "rb") as f:
        repos = tomllib.load(f)["repo"]
    status = 0
    for r in repos:
        if a.repos and r["name"] not in a.repos:
            continue
        try:
            n, rev = extract_repo(r["name"], r.get("commit", ""), a.mirror, a.out)
        except (FileNotFoundError, subprocess.CalledProcessError) as e:
            print(f"error: {e}", file=sys.stderr)
            status = 1
            continue
        print(f"{r['name']:32} {rev[:12]} {n:5} files")
    return status


if __name__ == "__main__":
    sys.exit(main())
