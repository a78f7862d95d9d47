"""The whole-CLI fuzzer (`bench/fuzz.py`) keeps working: a short seeded run finds nothing, and
its checks do catch a tool that misbehaves."""
from __future__ import annotations

import os
import random
import subprocess
import sys

import pytest

from conftest import ROOT, cli_env

sys.path.insert(0, os.path.join(ROOT, "bench"))
import fuzz  # noqa: E402


@pytest.mark.slow
def test_short_run_is_clean(tmp_path):
    env = cli_env()
    env["WARPLINT_CACHE_DIR"] = str(tmp_path / "cache")
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "fuzz.py"), "--inputs", "60",
                           "--jobs", "2", "--seed", "7"], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "inputs: 60, failures: 0" in proc.stdout


def test_cases_cover_the_cli_surface():
    seeds = [(b"__global__ void k(int *o) { o[0] = __ballot(1); }\n", ".cu"),
             (b".version 7.0\n.target sm_70\n.address_size 64\n", ".ptx")]
    rng = random.Random(1)
    argvs = [fuzz.make_case(rng, seeds)["argv"] for _ in range(400)]
    flat = {a for argv in argvs for a in argv}
    for opt in ("--fix", "--diff", "-o", "--show-masks", "--report-unused-suppressions", "sarif", "json", "github"):
        assert opt in flat


def test_judge_flags_a_file_changed_outside_the_fix(tmp_path):
    (tmp_path / "k.cu").write_text("x")
    (tmp_path / "other.cu").write_text("y")
    before = fuzz.snapshot(tmp_path)
    (tmp_path / "other.cu").write_text("changed")
    case = {"files": {"k.cu": b"x", "other.cu": b"y"}, "main": "k.cu"}
    argv = ["--format", "text", "--fix", "--", "."]
    problem = fuzz.judge(1, "", "", argv, tmp_path, before, case, None)
    assert problem and "other.cu" in problem


def test_judge_flags_internal_errors_and_bad_json(tmp_path):
    case = {"files": {}, "main": "k.cu"}
    assert "internal error" in fuzz.judge(2, "", "warplint: internal error: boom", ["--format", "text"],
                                         tmp_path, {}, case, None)
    assert "does not parse" in fuzz.judge(1, "{", "", ["--format", "json"], tmp_path, {}, case, None)
