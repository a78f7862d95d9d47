"""The pre-commit hook, through the real `pre-commit try-repo` (installs warplint from this
repository into pre-commit's own virtual environment: slow, needs the package index)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from conftest import BUGGY_PTX, CLEAN_PTX, ROOT

pytestmark = pytest.mark.slow


def _pre_commit() -> list[str]:
    exe = shutil.which("pre-commit")
    if exe:
        return [exe]
    try:
        import pre_commit  # noqa: F401
    except ImportError:
        pytest.fail("pre-commit is not installed (it is part of the 'test' extra: pip install '.[test]')")
    return [sys.executable, "-m", "pre_commit"]


def test_hook_definition():
    import yaml  # pre-commit depends on PyYAML
    hooks = yaml.safe_load(open(os.path.join(ROOT, ".pre-commit-hooks.yaml")))
    (hook,) = [h for h in hooks if h["id"] == "warplint"]
    assert hook["entry"] == "warplint" and hook["language"] == "python"
    assert hook["pass_filenames"] is True
    import re
    rx = re.compile(hook["files"])
    assert rx.search("k.cu") and rx.search("a/b.cuh") and rx.search("x.ptx") and not rx.search("x.cpp")


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory):
    return tmp_path_factory.mktemp("pre-commit-home")


def _git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"})


@pytest.mark.parametrize("text, ok", [(BUGGY_PTX, False), (CLEAN_PTX, True)], ids=["buggy", "clean"])
def test_try_repo(tmp_path, pre_commit_home, text, ok):
    if not os.path.isdir(os.path.join(ROOT, ".git")):
        pytest.skip("needs the warplint git repository")
    repo = tmp_path / "user-repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "kernel.ptx").write_text(text)
    _git(repo, "add", "kernel.ptx")
    env = {**os.environ, "PRE_COMMIT_HOME": str(pre_commit_home), "WARPLINT_CACHE_DIR": str(tmp_path / "c")}
    env.pop("PYTHONPATH", None)
    r = subprocess.run([*_pre_commit(), "try-repo", ROOT, "warplint", "--files", "kernel.ptx", "--verbose"],
                       cwd=repo, capture_output=True, text=True, env=env, timeout=900)
    out = r.stdout + r.stderr
    if ok:
        assert r.returncode == 0, out[-4000:]
        assert "Passed" in out
    else:
        assert r.returncode == 1, out[-4000:]
        assert "Failed" in out
        assert "kernel.ptx:11:5: error:" in out and "[WL001]" in out
