"""Issue 10: warplint never runs, reads or writes what the user did not ask for (files and data)."""
from __future__ import annotations

import os

import pytest

from warplint.findings import Finding
from warplint.ir import Loc
from warplint.report.fingerprint import fingerprints
from warplint.report.sources import Sources, split_lines

# -- one line model: lines end at '\n' only (item 2) --------------------------------------------

LINE_BREAKS_OF_SPLITLINES = "\f\v\x1c\x1d\x1e\x85\u2028\u2029"

FORM_FEED_CU = ("/* page 2 */\f\n"
                "__global__ void kernel_with_a_long_name(int *d, int y, int unused_parameter) {\n"
                "  d[threadIdx.x] = d[threadIdx.x + y] * 2; // warplint: ignore[WL003]\n"
                "  d[0] = y;\n"
                "}\n")


def test_fix_after_a_form_feed_removes_only_the_comment(project, run_cli):
    p = project.write("k.cu", FORM_FEED_CU)
    status, out, err = run_cli("--no-cache", "--report-unused-suppressions", "--fix", "k.cu")
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
