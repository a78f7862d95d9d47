"""Issue 10: warplint never runs, reads or writes what the user did not ask for (files and data)."""
from __future__ import annotations

import os

import pytest
from conftest import BUGGY_PTX, CLEAN_PTX

from warplint.findings import Finding
from warplint.ir import Loc
from warplint.fingerprint import fingerprints
from warplint.sources import Sources, split_lines

# -- one line model: lines end at '\n' only (item 2) --------------------------------------------

LINE_BREAKS_OF_SPLITLINES = "\f\v\x1c\x1d\x1e\x85\u2028\u2029"

# the reproducer: with str.splitlines() the suppression's line was looked up one line
# too early, and the fix turned its line and the next into "  d[threadId  d[0] = y;"
FORM_FEED_CU = ("/* page 2 */\f\n"
                "__global__ void k(int *d, int y) {\n"
                "  int t = y;" + " " * 31 + "// t: the offset of this page\n"
                "  d[threadIdx.x] = d[threadIdx.x + t] * 2; // warplint: ignore[WL003]\n"
                "  d[0] = y;\n"
                "}\n")


def test_fix_after_a_form_feed_removes_only_the_comment(project, run_cli):
    p = project.write("k.cu", FORM_FEED_CU)
    status, out, err = run_cli("--no-cache", "--report-unused-suppressions", "--fix", "k.cu")
    assert "fixed 1 finding" in err
    assert p.read_text() == FORM_FEED_CU.replace(" // warplint: ignore[WL003]", "")


def test_sources_lines_end_at_newline_only():
    src = Sources()
    src.add("f.cu", f"a{LINE_BREAKS_OF_SPLITLINES}b\r\nc\n")
    assert src.line("f.cu", 1) == f"a{LINE_BREAKS_OF_SPLITLINES}b\r"
    assert src.line("f.cu", 2) == "c"
    assert split_lines("a\fb\nc", keepends=True) == ["a\fb\n", "c"]


def test_fingerprints_count_newlines_only():
    def fp(text):
        src = Sources()
        src.add("f.cu", text)
        f = Finding("WL003", "error", "m", Loc("f.cu", 3, 1), function="k")
        return fingerprints([f], src)[id(f)]
    body = "int a;\nint b;\nx = __shfl_sync(m, v, 0);\n"
    assert fp(body) == fp("int a;" + LINE_BREAKS_OF_SPLITLINES + body[6:])


def test_deprecated_fix_after_line_separators(project, run_cli):
    text = ("/* a */" + LINE_BREAKS_OF_SPLITLINES + " int z;\n__global__ void k(int *d) {\n"
            "  d[threadIdx.x] = __ballot(d[threadIdx.x] > 0);\n}\n")
    p = project.write("w.cu", text)
    run_cli("--no-cache", "--fix", "w.cu")
    assert p.read_text(encoding="utf-8") == text.replace("__ballot(", "__ballot_sync(0xffffffff, ")


# -- n findings in one file cost linear time (item 5, the report side) ------------------------

def test_many_findings_in_one_file_are_linear():
    import time

    from warplint.findings import Edit, Fix
    from warplint.fixer import plan
    from warplint.suppress import apply
    n = 20000
    text = "  __ballot(v); // warplint: ignore[WL002]\n" * n
    src = Sources()
    src.add("f.cu", text)
    fs = [Finding("WL001", "warning", "m", Loc("f.cu", i, 3), function="k",
                  fix=Fix("f", [Edit("f.cu", i, 3, i, 12, "__ballot_sync(0xffffffff, ")])) for i in range(1, n + 1)]
    t = time.perf_counter()
    fingerprints(fs, src)
    apply(fs, src, files=["f.cu"], report_unused=True)
    plans, notes = plan(fs, src)
    new = plans[os.path.abspath("f.cu")].new_text
    assert time.perf_counter() - t < 10  # linear: ~3 s here; quadratic: minutes
    assert not notes and new.count("__ballot_sync(0xffffffff, v)") == n


# -- --output writes only where it should (item 4) ----------------------------------------------

def test_output_through_a_symlink_keeps_the_link(project, run_cli):
    project.write("k.ptx", CLEAN_PTX)
    project.write("reports/out.txt", "old\n")
    os.symlink("reports/out.txt", project.root / "link.txt")
    status, out, err = run_cli("--format", "json", "-o", "link.txt", "k.ptx")
    assert status == 0 and os.path.islink(project.root / "link.txt")
    assert '"findings"' in (project.root / "reports/out.txt").read_text()


def test_output_to_dev_null_writes_in_place(project, run_cli):
    import stat
    project.write("k.ptx", CLEAN_PTX)
    os.symlink(os.devnull, project.root / "null.sarif")
    for target in (os.devnull, "null.sarif"):
        status, out, err = run_cli("--format", "sarif", "-o", target, "k.ptx")
        assert status == 0, err
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode) and os.path.islink(project.root / "null.sarif")


def test_output_to_a_fifo(project, run_cli):
    import stat
    import threading
    project.write("k.ptx", CLEAN_PTX)
    fifo = project.root / "pipe"
    os.mkfifo(fifo)
    status, out, err = run_cli("-o", "pipe", "k.ptx")  # nobody reads it: an error, not a hang
    assert status == 2 and "FIFO that no process reads" in err
    got = []
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader is there
    reader = threading.Thread(target=lambda: got.append(_read_all(fd)))
    status, out, err = run_cli("--format", "json", "-o", "pipe", "k.ptx")
    reader.start()
    reader.join(10)
    assert status == 0 and b'"findings"' in got[0] and stat.S_ISFIFO(os.stat(fifo).st_mode)


def _read_all(fd):
    import select
    data = b""
    while select.select([fd], [], [], 5)[0]:
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        data += chunk
    os.close(fd)
    return data


def test_output_to_a_directory_or_dangling_link_is_refused(project, run_cli):
    project.write("k.ptx", CLEAN_PTX)
    (project.root / "d").mkdir()
    os.symlink("missing/x", project.root / "dangling")
    for target, why in (("d", "is a directory"), ("dangling", "symlink to a missing file")):
        status, out, err = run_cli("-o", target, "k.ptx")
        assert status == 2 and why in err
    assert not os.path.exists(project.root / "missing")


def test_new_output_honours_the_umask(project, run_cli):
    project.write("k.ptx", CLEAN_PTX)
    old = os.umask(0o027)
    try:
        run_cli("-o", "r.txt", "k.ptx")
    finally:
        os.umask(old)
    assert os.stat(project.root / "r.txt").st_mode & 0o777 == 0o640


# -- --fix details (item 10) --------------------------------------------------------------------

def test_fix_through_a_symlink_fixes_the_target(project, run_cli):
    real = project.write("src/a.ptx", BUGGY_PTX)
    os.symlink("src/a.ptx", project.root / "a.ptx")
    run_cli("--fix", "a.ptx")
    assert os.path.islink(project.root / "a.ptx") and real.read_text() == CLEAN_PTX


def test_fix_refuses_a_hard_linked_file(project, run_cli):
    p = project.write("a.ptx", BUGGY_PTX)
    os.link(p, project.root / "b.ptx.bak")
    status, out, err = run_cli("--fix", "a.ptx")
    assert status == 2 and "hard links" in err
    assert p.read_text() == BUGGY_PTX and os.stat(p).st_nlink == 2


@pytest.mark.parametrize("exchange", [True, False], ids=["renameat2", "no-renameat2"])
@pytest.mark.parametrize("how", ["rename", "in place"])
def test_edit_saved_during_the_fix_is_not_lost(project, run_cli, monkeypatch, how, exchange):
    import warplint.fixer as fx
    if not exchange:
        monkeypatch.setattr(fx, "_exchange", lambda a, b: False)
    p = project.write("a.ptx", BUGGY_PTX)
    edited = BUGGY_PTX + "// saved by an editor\n"
    real_write = fx._write

    def write_then_editor_saves(fd, data):
        real_write(fd, data)
        if how == "rename":  # the way most editors save
            project.write("a.ptx.new", edited)
            os.replace(project.root / "a.ptx.new", p)
        else:
            with open(p, "a") as f:
                f.write("// saved by an editor\n")
    monkeypatch.setattr(fx, "_write", write_then_editor_saves)
    status, out, err = run_cli("--fix", "a.ptx")
    assert status == 2 and "changed on disk" in err
    assert p.read_text() == edited
    assert [n for n in os.listdir(project.root) if n.endswith(".warplint-tmp")] == []


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to own files as others")
def test_fix_keeps_owner_and_mode(project, run_cli):
    p = project.write("a.ptx", BUGGY_PTX)
    os.chown(p, 1234, 5678)
    os.chmod(p, 0o640)
    run_cli("--fix", "a.ptx")
    st = os.stat(p)
    assert p.read_text() == CLEAN_PTX and (st.st_uid, st.st_gid, st.st_mode & 0o777) == (1234, 5678, 0o640)
