"""Automatic fixes: edits, CRLF, overlaps, --fix (atomic, mode kept, refuses changed files), --diff."""
from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time

import pytest
from conftest import BUGGY_PTX, CLEAN_PTX, cli_env

from warplint.findings import Edit, Finding, Fix
from warplint.fixer import FixError, apply_edits, plan, write_atomic
from warplint.ir import Loc
from warplint.sources import Sources


def E(l, c, el, ec, t, p="f.ptx"):
    return Edit(p, l, c, el, ec, t)


def test_apply_edits_basic():
    text = "abc\ndef\nghi\n"
    assert apply_edits(text, [E(2, 2, 2, 3, "X")]) == "abc\ndXf\nghi\n"
    assert apply_edits(text, [E(1, 4, 2, 1, "")]) == "abcdef\nghi\n"  # join lines
    assert apply_edits(text, [E(3, 1, 3, 1, ">"), E(1, 1, 1, 2, "")]) == "bc\ndef\n>ghi\n"
    assert apply_edits(text, [E(4, 1, 4, 1, "end\n")]) == text + "end\n"  # insert at EOF


def test_crlf_and_bytes_elsewhere_untouched():
    text = "a\r\nvote.any.pred %p2, %p1;\r\n\tz \u00e9\r\n"
    new = apply_edits(text, [E(2, 1, 2, 24, "vote.sync.any.pred %p2, %p1, 0xffffffff;")])
    assert new == "a\r\nvote.sync.any.pred %p2, %p1, 0xffffffff;\r\n\tz \u00e9\r\n"


def _finding(rule, line, edits, desc="fix"):
    return Finding(rule, "warning", "m", Loc("f.ptx", line, 1), fix=Fix(desc, edits))


def test_overlapping_fixes_first_wins():
    src = Sources()
    src.add("f.ptx", "0123456789\nabcdef\n")
    f1 = _finding("WL001", 1, [E(1, 2, 1, 6, "X")])
    f2 = _finding("WL003", 1, [E(1, 4, 1, 8, "Y")])  # overlaps f1
    f3 = _finding("WL005", 2, [E(2, 1, 2, 2, "Z")])
    f4 = _finding("WL001", 1, [E(1, 2, 1, 6, "X")])  # the same edit again (duplicate finding)
    plans, notes = plan([f1, f2, f3, f4], src)
    (p,) = plans.values()
    assert p.new_text == "0X56789\nZbcdef\n"
    assert p.fixed == [f1, f3, f4]
    assert len(notes) == 1 and "fix for WL003 skipped" in notes[0]


def test_insertions_at_same_point_conflict():
    src = Sources()
    src.add("f.ptx", "abc\n")
    plans, notes = plan([_finding("WL001", 1, [E(1, 2, 1, 2, "X")]),
                         _finding("WL002", 1, [E(1, 2, 1, 2, "Y")])], src)
    assert next(iter(plans.values())).new_text == "aXbc\n" and len(notes) == 1


def test_out_of_range_edit_is_skipped():
    src = Sources()
    src.add("f.ptx", "abc\n")
    plans, notes = plan([_finding("WL001", 1, [E(9, 1, 9, 2, "X")])], src)
    assert "out of range" in notes[0]


def test_write_atomic_refuses_changed_file(tmp_path):
    p = tmp_path / "a.ptx"
    p.write_bytes(b"old")
    with pytest.raises(FixError, match="changed on disk"):
        write_atomic(str(p), b"new", expect=b"older")
    assert p.read_bytes() == b"old"
    write_atomic(str(p), b"new", expect=b"old")
    assert p.read_bytes() == b"new"


def test_cli_fix_in_place(project, run_cli):
    p = project.write("a.ptx", BUGGY_PTX.replace("\n", "\r\n"))
    os.chmod(p, 0o640)
    status, out, err = run_cli("--fix", "a.ptx")
    assert status == 0, err
    assert "fixed 1 finding in 1 file" in err
    assert p.read_bytes() == CLEAN_PTX.replace("\n", "\r\n").encode()
    assert stat.S_IMODE(os.stat(p).st_mode) == 0o640
    assert sorted(os.listdir(project.root)) == ["a.ptx"]  # no temp file left behind
    assert run_cli("a.ptx")[0] == 0


def test_cli_fix_keeps_suppressed(project, run_cli):
    line = "    vote.any.pred %p2, %p1;"
    text = BUGGY_PTX.replace(line, line + " // warplint: ignore[WL001]")
    p = project.write("a.ptx", text)
    assert run_cli("--fix", "a.ptx")[0] == 0
    assert p.read_text() == text


def test_cli_diff(project, run_cli):
    p = project.write("a.ptx", BUGGY_PTX)
    status, out, err = run_cli("--diff", "a.ptx")
    assert status == 1
    assert out.startswith("--- a/a.ptx\n+++ b/a.ptx\n@@")
    assert "-    vote.any.pred %p2, %p1;\n+    vote.sync.any.pred %p2, %p1, 0xffffffff;\n" in out
    assert p.read_text() == BUGGY_PTX


def test_cli_fix_refuses_when_file_changed(project, run_cli, monkeypatch):
    import warplint.fixer
    p = project.write("a.ptx", BUGGY_PTX)
    real_plan = warplint.fixer.plan

    def plan_then_edit(*args):
        result = real_plan(*args)
        p.write_text(BUGGY_PTX + "// edited meanwhile\n")  # someone saves the file mid-run
        return result
    monkeypatch.setattr(warplint.fixer, "plan", plan_then_edit)
    status, out, err = run_cli("--fix", "a.ptx")
    assert status == 2
    assert "changed on disk since it was read" in err
    assert p.read_text() == BUGGY_PTX + "// edited meanwhile\n"


SLOW_FIX = r"""
import os, sys, time
import warplint.fixer as fx
def slow_write(fd, data):
    os.write(fd, data[:20])
    os.fsync(fd)
    open(sys.argv[2], "w").close()  # tell the test we are mid-write
    time.sleep(60)
    os.write(fd, data[20:])
fx._write = slow_write
from warplint.cli import main
sys.exit(main(["--no-cache", "--fix", sys.argv[1]]))
"""


def test_fix_killed_midway_leaves_file_intact(project):
    p = project.write("a.ptx", BUGGY_PTX)
    flag = project.root / "writing.flag"
    proc = subprocess.Popen([sys.executable, "-c", SLOW_FIX, str(p), str(flag)], env=cli_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 60
        while not flag.exists():
            assert proc.poll() is None, proc.communicate()
            assert time.time() < deadline, "fix never started writing"
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert p.read_text() == BUGGY_PTX  # untouched: the new content only ever went to a temp file
    leftovers = [n for n in os.listdir(project.root) if n.endswith(".warplint-tmp")]
    assert len(leftovers) == 1  # the partial temp file (never picked up: not a .ptx/.cu name)
    from warplint.walk import collect
    assert collect([str(project.root)])[0] == [str(p)]
    # the next run removes it: its name says which (now dead) process wrote it
    subprocess.run([sys.executable, "-m", "warplint", "--no-cache", "--fix", str(p)], env=cli_env(),
                   capture_output=True, timeout=120)
    assert p.read_text() == CLEAN_PTX
    assert [n for n in os.listdir(project.root) if n.endswith(".warplint-tmp")] == []


def test_fix_editing_a_file_not_linted_is_skipped(tmp_path):
    victim = tmp_path / "victim.cu"
    victim.write_text("int important;\n")
    src = Sources()
    f = _finding("WL001", 1, [E(1, 1, 1, 4, "", p=str(victim))])
    plans, notes = plan([f], src, {str(tmp_path / "f.ptx")})
    assert plans == {} and "not a linted file" in notes[0]
