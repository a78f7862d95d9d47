"""`.loc ... inlined_at` chains (issue 16): code inlined from a library is reported at the call in
the linted tree, with the library frames as code-flow steps; no nvcc needed here."""
from __future__ import annotations

from warplint.frontends.ptx import parse_ptx
from warplint.ir import Loc
from warplint.options import Options
from warplint.pipeline import lint_file

# a half-warp ballot (WL002 before Volta) inside a library helper (lib.cuh:232, inside helper(), called at lib.cuh:511
# inside outer(), called from the user's kernel at k.cu:4); nvcc repeats the chain before each
# instruction, and a recursive helper names the same place twice (lib.cuh:511 inlined at 511)
PTX = """\
.version 8.0
.target sm_60
.address_size 64

.visible .entry k(.param .u64 out)
{{
\t.reg .pred %p<3>;
\t.reg .b32 %r<4>;
\t.loc 1 2 3
\tmov.u32 %r1, %laneid;
\tsetp.ge.u32 %p1, %r1, 16;
\t@%p1 bra $DONE;
\t.loc 1 4 5
\t.loc 2 511 5, function_name $L__info_string0, inlined_at 1 4 5
\t.loc 2 511 5, function_name $L__info_string0, inlined_at 2 511 5
\t.loc 2 232 13, function_name $L__info_string1, inlined_at 2 511 5
\tvote.sync.ballot.b32 %r3, %p1, 0xffffffff;
$DONE:
\t.loc 1 6 1
\tret;
}}
\t.file 1 "{user}"
\t.file 2 "{lib}"
\t.section .debug_str
\t{{
$L__info_string0:
.b8 95,90,78,51,108,105,98,53,111,117,116,101,114,69,118,0
$L__info_string1:
.b8 95,90,78,51,108,105,98,54,104,101,108,112,101,114,69,118,0
\t}}
"""
USER = "__global__ void k(unsigned *out) {\n  int lane = threadIdx.x % 32;\n  if (lane < 16)\n    lib::outer();\n}\n\n"
LIB = "/nonexistent-warplint-lib/lib.cuh"


def _project(tmp_path):
    (tmp_path / ".git").mkdir()
    user = tmp_path / "k.cu"
    user.write_text(USER)
    ptx = tmp_path / "k.ptx"
    ptx.write_text(PTX.format(user=user, lib=LIB))
    return user, ptx


def test_parser_keeps_the_whole_chain(tmp_path):
    user, ptx = _project(tmp_path)
    fn = parse_ptx(ptx.read_text(), str(ptx)).functions[0]
    vote = next(i for i in fn.body if getattr(i, "op", "") == "vote")
    assert [(loc.path, loc.line, name) for loc, name in vote.frames] == [
        (LIB, 232, "$L__info_string1"), (LIB, 511, "$L__info_string0"), (LIB, 511, "$L__info_string0"),
        (str(user), 4, "")]


def test_finding_at_the_call_site_in_the_tree_with_library_steps(tmp_path):
    user, ptx = _project(tmp_path)
    r = lint_file(str(ptx), Options(targets=["sm_60"]))
    assert r.findings, r.diagnostics
    for f in r.findings:
        assert f.loc == Loc(str(user), 4, 5)
        library = [s for s in f.flow if s.loc.path == LIB]
        assert [(s.loc.line, s.message) for s in library] == [
            (511, "inside lib::outer, called here"), (511, "inside lib::outer, called here"),
            (232, "inside lib::helper")]
        assert any("lib.cuh:232 (inside lib::helper)" in d for d in f.details)


def test_suppression_at_the_call_site(tmp_path):
    from warplint.cli import main
    user, ptx = _project(tmp_path)
    assert main(["--no-cache", "--target", "sm_60", str(ptx)]) == 1
    user.write_text(USER.replace("lib::outer();", "lib::outer();  // warplint: ignore"))
    assert main(["--no-cache", "--target", "sm_60", str(ptx)]) == 0


def test_chain_without_a_frame_in_the_tree_stays_at_the_ptx_line(tmp_path):
    user, ptx = _project(tmp_path)
    ptx.write_text(PTX.format(user="/nonexistent-warplint-lib/k.cu", lib=LIB))
    r = lint_file(str(ptx), Options(targets=["sm_60"]))
    assert r.findings and all(f.loc.path == str(ptx) for f in r.findings)


def test_endless_chain_is_bounded():
    lines = "".join("\t.loc 1 7 1, function_name $L__info_string0, inlined_at 1 7 1\n" for _ in range(2000))
    text = (".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n" + lines +
            "\tret;\n}\n\t.file 1 \"/x/a.cu\"\n")
    ret = parse_ptx(text, "t.ptx").functions[0].body[-1]
    assert 1 < len(ret.frames) <= 64


def test_baseline_at_the_call_site(tmp_path):
    from warplint.cli import main
    user, ptx = _project(tmp_path)
    base = tmp_path / "base.sarif"
    assert main(["--no-cache", "--target", "sm_60", "--format", "sarif", "-o", str(base), str(ptx)]) == 1
    assert main(["--no-cache", "--target", "sm_60", "--baseline", str(base), str(ptx)]) == 0


def test_library_function_names_from_the_debug_strings():
    from warplint.callsite import function_names
    # an enumeration value among the template arguments (CUB's BlockReduceAlgorithm)
    name = b"_ZN3cub17CUB_300001_SM_80011BlockReduceIfLi128ELNS0_20BlockReduceAlgorithmE2ELi1ELi1EE3SumEf"
    ptx = "$L__info_string3:\n.b8 " + ",".join(str(b) for b in name + b"\0") + "\n"
    assert function_names(ptx) == {"$L__info_string3": "cub::CUB_300001_SM_800::BlockReduce<...>::Sum"}


def test_compiled_findings_with_no_frame_in_the_tree_are_dropped_with_a_note():
    from warplint.findings import Finding
    from warplint.via_nvcc import drop_library_only
    mine = Finding("WL004", "error", "m", Loc("k.cu", 3, 1))
    library = Finding("WL004", "error", "m", Loc("k.cu.ptx", 900, 2))  # no .loc frame in the tree
    notes: list = []
    assert drop_library_only([mine, library], "k.cu", Options(), notes) == [mine]
    assert [(d.severity, d.message.split(" (")[0]) for d in notes] == [
        ("note", "1 finding(s) in compiled code with no source line in the linted tree")]
    notes.clear()
    assert drop_library_only([mine, library], "k.cu", Options(library_findings="keep"), notes) == [mine, library]
    assert notes == []
