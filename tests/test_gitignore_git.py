"""The .gitignore matcher against git itself: random trees and patterns, compared with
`git check-ignore` (which also reports files inside ignored directories)."""
from __future__ import annotations

import os
import random
import shutil
import subprocess
import time

import pytest

from warplint.walk import collect, wildmatch

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

DIRS = ["a", "b", "ab", "ba", "A", "1", "x.y", "a-b"]
FILES = ["a.cu", "b.cu", "ab.cu", "A.cu", "1.cu", "x.cu", "a b.cu", "-.cu", "[a].cu", "a!.cu"]
ATOMS = ["*", "**", "?", "a", "b", "A", ".cu", "[a-c]", "[!a]", "[^b]", "[[:alpha:]]", "[[:digit:]]",
         "[[:upper:]]", "[z-a]", "[]a]", "[a-]", "\\*", "\\[", "[", "-", "x", "1", " "]


def _pattern(rng: random.Random) -> str:
    parts = []
    for _ in range(rng.randint(1, 3)):
        parts.append("".join(rng.choice(ATOMS) for _ in range(rng.randint(1, 3))))
    pat = "/".join(parts)
    if rng.random() < 0.2:
        pat = "/" + pat
    if rng.random() < 0.2:
        pat += "/"
    if rng.random() < 0.2:
        pat = "!" + pat
    return pat


def _tree(rng: random.Random, root) -> list[str]:
    files = []
    for _ in range(rng.randint(3, 12)):
        d = "/".join(rng.choice(DIRS) for _ in range(rng.randint(0, 3)))
        f = (d + "/" if d else "") + rng.choice(FILES)
        path = root / f
        if any(p.is_file() for p in path.parents if p != root and p.is_relative_to(root)):
            continue  # a file already has the directory's name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
        files.append(f)
    dirs = sorted({os.path.dirname(f) for f in files} - {""})
    for where in [""] + rng.sample(dirs, min(len(dirs), 2)):
        lines = [_pattern(rng) for _ in range(rng.randint(1, 5))]
        (root / where / ".gitignore").write_text("\n".join(lines) + "\n")
    return sorted(set(files))


def _git_kept(root, files: list[str]) -> set[str]:
    r = subprocess.run(["git", "check-ignore", "--no-index", "--stdin", "-z"], cwd=root,
                       input="\0".join(files) + "\0", capture_output=True, text=True)
    assert r.returncode in (0, 1), r.stderr
    return set(files) - set(filter(None, r.stdout.split("\0")))


def _compare(tmp_path, seed: int) -> None:
    rng = random.Random(seed)
    root = tmp_path / f"t{seed}"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    files = _tree(rng, root)
    ours = collect([str(root)], root=str(root)).files
    got = {os.path.relpath(f, root).replace(os.sep, "/") for f in ours}
    want = _git_kept(root, files)
    if got != want:
        ignores = {str(p.relative_to(root)): p.read_text() for p in root.rglob(".gitignore")}
        pytest.fail(f"seed {seed}: only git keeps {sorted(want - got)}, only warplint keeps "
                    f"{sorted(got - want)}; ignore files {ignores}")


@pytest.mark.parametrize("seed", range(40))
def test_matches_git_check_ignore(tmp_path, seed):
    _compare(tmp_path, seed)


@pytest.mark.slow
def test_matches_git_check_ignore_many(tmp_path):
    for seed in range(40, 1500):
        _compare(tmp_path, seed)


@pytest.mark.parametrize("line, kept", [
    ("[z-a].cu", ["a.cu", "b.cu"]),  # an empty range: matches nothing (was an internal error)
    ("[[:alpha:]].cu", []),
    ("[[:digit:]].cu", ["a.cu", "b.cu"]),
    ("\\a.cu", ["b.cu"]),
    ("a.cu\\ ", ["a.cu", "b.cu"]),  # an escaped trailing space is part of the name
    ("a.cu  ", ["b.cu"]),
])
def test_pattern_syntax(tmp_path, line, kept):
    for name in ("a.cu", "b.cu"):
        (tmp_path / name).write_text("x")
    (tmp_path / ".gitignore").write_text(line + "\n")
    assert sorted(os.path.basename(f) for f in collect([str(tmp_path)], root=str(tmp_path)).files) == kept


def test_many_double_stars_are_not_exponential():
    path = b"/".join([b"d"] * 60) + b"/y"
    start = time.perf_counter()
    assert not wildmatch(b"**/" * 8 + b"x", path)
    assert not wildmatch(b"*a" * 40 + b"b", b"a" * 500)
    assert time.perf_counter() - start < 2


def test_thousands_of_stars_do_not_crash():
    assert wildmatch(b"*a" * 5000, b"a" * 5000) in (True, False)
