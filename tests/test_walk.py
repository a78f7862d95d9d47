"""Directory walking: suffixes, .gitignore (git-exact, see test_gitignore_git.py), include/exclude, symlinks."""
from __future__ import annotations

import os

import pytest

from warplint.walk import GitIgnore, collect, glob_match


def touch(root, *names):
    for n in names:
        p = root / n
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("x")


def rel(root, files):
    return [os.path.relpath(f, root).replace(os.sep, "/") for f in files]


@pytest.mark.parametrize("pattern, path, hit", [
    ("*.ptx", "a.ptx", True), ("*.ptx", "d/e/a.ptx", True), ("*.ptx", "a.cu", False),
    ("/a.ptx", "a.ptx", True), ("/a.ptx", "d/a.ptx", False),
    ("d/*.ptx", "d/a.ptx", True), ("d/*.ptx", "x/d/a.ptx", False), ("d/*.ptx", "d/e/a.ptx", False),
    ("d/**/a.ptx", "d/a.ptx", True), ("d/**/a.ptx", "d/x/y/a.ptx", True),
    ("**/gen", "x/gen/a.ptx", True), ("gen/", "x/gen/a.ptx", True), ("src/**", "src/x/y.cu", True),
    ("a?.cu", "ab.cu", True), ("a?.cu", "a/.cu", False), ("[ab].cu", "b.cu", True), ("[!ab].cu", "b.cu", False),
])
def test_glob(pattern, path, hit):
    assert glob_match(pattern, path) is hit


def test_suffixes_and_order(tmp_path):
    touch(tmp_path, "b.cu", "a.ptx", "c.cuh", "d.txt", "e.cpp", "sub/z.ptx", "sub/a.cu", ".git/x.ptx")
    files, errors, _ = collect([str(tmp_path)], root=str(tmp_path))
    assert sorted(rel(tmp_path, files)) == ["a.ptx", "b.cu", "c.cuh", "sub/a.cu", "sub/z.ptx"]
    assert errors == []


def test_explicit_file_always_linted(tmp_path):
    touch(tmp_path, "kernel.txt")
    files, *_ = collect([str(tmp_path / "kernel.txt")], root=str(tmp_path))
    assert sorted(rel(tmp_path, files)) == ["kernel.txt"]


def test_missing(tmp_path):
    files, errors, _ = collect([str(tmp_path / "nope")], root=str(tmp_path))
    assert files == [] and errors == [(str(tmp_path / "nope"), "no such file or directory")]


def test_duplicates_removed(tmp_path):
    touch(tmp_path, "a.ptx")
    files, *_ = collect([str(tmp_path), str(tmp_path / "a.ptx")], root=str(tmp_path))
    assert len(files) == 1


def test_gitignore(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("# comment\n\nbuild/\n*.gen.ptx\n!keep.gen.ptx\n/top.cu\n"
                                         "deep/**/x.cu\n")
    touch(tmp_path, "build/a.ptx", "a.gen.ptx", "keep.gen.ptx", "top.cu", "sub/top.cu",
          "deep/1/2/x.cu", "deep/y.cu", "sub/build", "ok.ptx")
    (tmp_path / "sub" / ".gitignore").write_text("*.cu\n!top.cu\n")
    touch(tmp_path, "sub/other.cu")
    files, *_ = collect([str(tmp_path)], root=str(tmp_path))
    assert sorted(rel(tmp_path, files)) == ["deep/y.cu", "keep.gen.ptx", "ok.ptx", "sub/top.cu"]
    files, *_ = collect([str(tmp_path)], root=str(tmp_path), gitignore=False)
    assert len(files) == 9


def test_gitignore_above_the_argument(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("generated/\n")
    touch(tmp_path, "src/generated/a.ptx", "src/b.ptx")
    files, *_ = collect([str(tmp_path / "src")], root=str(tmp_path))
    assert sorted(rel(tmp_path, files)) == ["src/b.ptx"]


def test_gitignore_stops_at_repository_root(tmp_path):
    (tmp_path / ".gitignore").write_text("*.ptx\n")  # outside the repository below
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    touch(repo, "a.ptx")
    files, *_ = collect([str(repo)], root=str(repo))
    assert rel(repo, files) == ["a.ptx"]
    assert GitIgnore().ignored(str(repo / "a.ptx"), False) is False


def test_include_exclude(tmp_path):
    touch(tmp_path, "src/a.ptx", "src/gen/b.ptx", "tests/c.cu", "d.cu")
    files, *_ = collect([str(tmp_path)], include=["src/**", "*.cu"], exclude=["gen"], root=str(tmp_path))
    assert sorted(rel(tmp_path, files)) == ["d.cu", "src/a.ptx", "tests/c.cu"]


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks")
def test_symlinks(tmp_path):
    tree = tmp_path / "tree"
    outside = tmp_path / "outside"
    touch(tree, "a.ptx", "inner/b.ptx")
    touch(outside, "o.ptx", "p.ptx")
    os.symlink(outside, tree / "link_out")
    os.symlink(outside / "p.ptx", tree / "file_out.ptx")
    os.symlink(tree / "inner", tree / "link_in")  # inside the tree: same files, not twice
    os.symlink(tree, tree / "inner" / "loop")  # a loop
    os.symlink(tree / "missing.ptx", tree / "broken.ptx")
    files, *_ = collect([str(tree)], root=str(tree))
    assert sorted(rel(tree, files)) == ["a.ptx", "inner/b.ptx"]
    files, *_ = collect([str(tree)], root=str(tree), follow_symlinks=True)
    assert sorted(rel(tree, files)) == ["a.ptx", "file_out.ptx", "inner/b.ptx", "link_out/o.ptx"]


def test_cli_directory_and_gitignore(project, run_cli):
    from conftest import BUGGY_PTX
    project.write(".gitignore", "ignored/\n")
    (project.root / ".git").mkdir()
    project.write("ignored/a.ptx", BUGGY_PTX)
    project.write("kept/a.ptx", BUGGY_PTX)
    status, out, err = run_cli("--jobs", "1", ".")
    assert "kept/a.ptx" in out and "ignored/" not in out
    status, out, err = run_cli("--jobs", "1", "--no-gitignore", ".")
    assert "kept/a.ptx" in out and "ignored/a.ptx" in out


def test_gitignore_outside_a_repository_starts_at_the_walked_directory(tmp_path):
    (tmp_path / ".gitignore").write_text("*.ptx\n")  # above the tree, no repository: not used
    tree = tmp_path / "tree"
    touch(tree, "a.ptx", "sub/b.ptx")
    (tree / "sub" / ".gitignore").write_text("b.ptx\n")
    files, *_ = collect([str(tree)], root=str(tree))
    assert sorted(rel(tree, files)) == ["a.ptx"]
