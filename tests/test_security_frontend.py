"""Issue 10, items 8 and 9: nothing is silently left unanalysed, and nothing outside the linted
tree is read or quoted.  Each test is the reproducer in its simplest form."""
from __future__ import annotations

import os

import pytest

from warplint.pipeline import lint_file
from warplint.frontends.cuda import preprocess as pp_mod
from warplint.options import Options

# WL002 on sm_60 / WL003: a full-warp shuffle under a lane condition
KERNEL = """__global__ void {name}(int *d) {{
    if (threadIdx.x < 16)
        d[0] = __shfl_sync(0xffffffff, d[1], 0);
}}
"""
SECRET = "hunter2"


def lint(path, **kw):
    return lint_file(str(path), Options(**kw))


def notes(result) -> list[str]:
    return [f"{d.loc.line}:{d.loc.col}: {d.message}" for d in result.diagnostics if d.severity == "note"]


def finding_lines(result) -> list[int]:
    return sorted({f.loc.line for f in result.findings})


def no_secret(result) -> None:
    text = " ".join(d.message for d in result.diagnostics) + " ".join(f.message for f in result.findings)
    assert SECRET not in text


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    return root


# -- item 8: a word, with a location, for every part not analysed ------------------------------
def test_qualifier_from_a_missing_header_is_reported(repo):
    k = repo / "k.cu"
    k.write_text('#include "missing_defs.h"\n' + KERNEL.format(name="k").replace("__global__", "KERNEL"))
    r = lint(k)
    assert not r.failed
    assert notes(r)[0].startswith("1:1: #include 'missing_defs.h' not found")
    assert notes(r)[1].startswith("2:1: 'KERNEL' is defined nowhere warplint read (its header is not given or "
                                  "not found): taken as __global__ (from its name)")  # and analysed as one


def test_include_of_proc_is_not_read_and_the_kernel_is_analysed(repo):
    k = repo / "k.cu"
    k.write_text('#include "/proc/self/status"\n' + KERNEL.format(name="k"))
    r = lint(k)
    assert notes(r) == ["1:1: #include '/proc/self/status' not read: it is outside the linted tree and "
                        "the -I directories (see -I)"]
    assert finding_lines(r) == [4]


@pytest.mark.parametrize("head", ["struct S { int a; }\n", "int x = 5\n"])
def test_missing_semicolon_resynchronises_at_the_next_declaration(repo, head):
    k = repo / "k.cu"
    k.write_text(head + KERNEL.format(name="k1") + KERNEL.format(name="k2"))
    r = lint(k)
    assert len(notes(r)) == 1 and notes(r)[0].startswith("1:1: code from here up to line 2 not analysed")
    assert finding_lines(r) == [4, 8]


def test_resynchronising_is_bounded_and_what_is_left_is_named(repo):
    """Every item glued to the next by a missing `;`: each resynchronisation re-splits the rest of
    the file, so it stops after a linear amount of work, with a note; the kernels left are named."""
    k = repo / "k.cu"
    k.write_text("int x = 5\n__global__ void k(int *d) { d[0] = 1; }\n" * 2000)
    r = lint(k)
    ns = notes(r)
    assert ns[0].startswith("1:1: code from here up to line 2 not analysed (analysis resumes there)")
    stop = [n for n in ns if "parsing no longer resumes after items that do not parse" in n]
    assert len(stop) == 1
    assert sum("function 'k' not analysed" in n for n in ns) > 1900


def test_kernel_glued_to_an_item_that_does_not_parse_is_named(repo):
    k = repo / "k.cu"
    k.write_text("int x = 5\n__global__ void k(int *d) { d[0] = 1 +; }\n")
    assert notes(lint(k)) == ["2:17: function 'k' not analysed: cannot parse line 2 "
                              "(unsupported C++ or syntax error)"]


def test_failing_function_is_not_split_at_its_own_lines(repo):
    """GNU style (name at column 1): a function that does not parse keeps its one note."""
    k = repo / "k.cu"
    k.write_text("__global__ void\nk(int *d)\n{\n    d[0] = 1 +;\n}\n")
    assert notes(lint(k)) == ["2:1: function 'k' not analysed: cannot parse ';' at line 4 "
                              "(unsupported C++ or syntax error)"]


def test_cr_only_line_endings_are_analysed_with_a_note(repo):
    k = repo / "k.cu"
    k.write_bytes(("// a comment\n#define N 16\n" + KERNEL.format(name="k")).replace("\n", "\r").encode())
    r = lint(k)
    assert notes(r) == ["1:13: line break by a bare CR (\\r): lines are counted at \\n only, so the locations "
                        "after it stay on this line"]
    assert [(f.loc.line, f.loc.col) for f in r.findings][:1] == [(1, 96)]


def test_utf8_bom_is_skipped(repo):
    k = repo / "k.cu"
    k.write_bytes(b"\xef\xbb\xbf" + KERNEL.format(name="k").encode())
    r = lint(k)
    assert not r.diagnostics and finding_lines(r) == [3]


def test_unterminated_comment_is_reported(repo):
    k = repo / "k.cu"
    k.write_text(KERNEL.format(name="k1") + "/* forgot to close\n" + KERNEL.format(name="k2"))
    r = lint(k)
    assert notes(r) == ["5:1: unterminated comment: the rest of the file is not analysed"]
    assert finding_lines(r) == [3]


def test_live_error_directive_is_reported(repo):
    k = repo / "k.cu"
    k.write_text('#if 0\n#error "dead"\n#endif\n#error "needs sm_70"\n' + KERNEL.format(name="k"))
    r = lint(k)
    assert notes(r) == ['4:1: #error in code that is compiled ("needs sm_70"): nvcc would stop here; '
                        'analysing the rest anyway']
    assert finding_lines(r) == [7]


def test_helper_past_the_inlining_depth_is_analysed_on_its_own(repo):
    k = repo / "k.cu"
    k.write_text("""__device__ int h5(int v) {
    if (threadIdx.x < 16) v = __shfl_sync(0xffffffff, v, 0);
    return v;
}
__device__ int h4(int v) { return h5(v); }
__device__ int h3(int v) { return h4(v); }
__device__ int h2(int v) { return h3(v); }
__device__ int h1(int v) { return h2(v); }
__global__ void k(int *d) { d[0] = h1(d[1]); }
""")
    r = lint(k)
    assert notes(r) == ["1:16: function 'h5' analysed on its own: no caller could inline it "
                        "(calls nested too deeply, or too large)"]
    assert finding_lines(r) == [2]


# -- item 9: reads stay in the linted tree, and notes quote only the linted file ---------------
def test_include_outside_the_tree_is_not_read_or_quoted(tmp_path, repo):
    (tmp_path / "secret.h").write_text(f"{SECRET} {SECRET}\n")
    k = repo / "src" / "k.cu"
    k.parent.mkdir()
    k.write_text('#include "../../secret.h"\n' + KERNEL.format(name="k"))
    r = lint(k)
    assert notes(r) == ["1:1: #include '../../secret.h' not read: it is outside the linted tree and "
                        "the -I directories (see -I)"]
    assert finding_lines(r) == [4]
    no_secret(r)
    # named with -I, the directory is readable
    r = lint(k, include_paths=[str(tmp_path)])
    assert not any("not read" in n for n in notes(r))


def test_include_through_a_link_out_of_the_tree_is_not_read(tmp_path, repo):
    (tmp_path / "secret.h").write_text(f"{SECRET} {SECRET}\n")
    os.symlink(tmp_path / "secret.h", repo / "inc.h")
    k = repo / "k.cu"
    k.write_text('#include "inc.h"\n' + KERNEL.format(name="k"))
    r = lint(k)
    assert notes(r)[0].startswith("1:1: #include 'inc.h' not read: it is outside the linted tree")
    no_secret(r)


def test_tree_is_the_repository(repo):
    (repo / "include").mkdir()
    (repo / "include" / "q.cuh").write_text("#define QUAL __global__\n")
    k = repo / "src" / "k.cu"
    k.parent.mkdir()
    k.write_text('#include "../include/q.cuh"\n' + KERNEL.format(name="k").replace("__global__", "QUAL"))
    r = lint(k)
    assert not r.diagnostics and finding_lines(r) == [4]


def test_tree_outside_a_repository_is_the_file_directory(tmp_path):
    (tmp_path / "q.cuh").write_text("#define QUAL __global__\n")
    k = tmp_path / "sub" / "k.cu"
    k.parent.mkdir()
    k.write_text('#include "../q.cuh"\n' + KERNEL.format(name="k").replace("__global__", "QUAL"))
    assert "not read: it is outside the linted tree" in notes(lint(k))[0]


def test_include_size_is_capped(repo, monkeypatch):
    big = repo / "big.h"
    with open(big, "wb") as f:
        f.truncate(pp_mod.MAX_INCLUDE_BYTES + 1)  # sparse: nothing of it is read
    k = repo / "k.cu"
    k.write_text('#include "big.h"\n' + KERNEL.format(name="k"))
    r = lint(k)
    assert notes(r) == [f"1:1: #include 'big.h' not read: file is {pp_mod.MAX_INCLUDE_BYTES + 1} bytes; "
                        f"the limit is {pp_mod.MAX_INCLUDE_BYTES}"]
    assert finding_lines(r) == [4]
    # the cap is on all the files included together
    monkeypatch.setattr(pp_mod, "MAX_INCLUDE_BYTES", 40)
    (repo / "a.h").write_text("#define A 1 /* thirty bytes */\n")
    (repo / "b.h").write_text("#define B 1 /* thirty bytes */\n")
    k.write_text('#include "a.h"\n#include "b.h"\n' + KERNEL.format(name="k"))
    assert notes(lint(k)) == ["2:1: #include 'b.h' not read: file is 31 bytes; the limit is 9"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs")
def test_include_of_a_fifo_does_not_block(repo):
    os.mkfifo(repo / "pipe.h")
    k = repo / "k.cu"
    k.write_text('#include "pipe.h"\n' + KERNEL.format(name="k"))
    r = lint(k)
    assert notes(r) == ["1:1: #include 'pipe.h' not read: not a regular file (a FIFO)"]
    assert finding_lines(r) == [4]


def test_notes_quote_only_the_linted_file(repo):
    (repo / "h.cuh").write_text(f"#define Q {SECRET}\nstruct {SECRET} {{ int a; }}\n")
    k = repo / "k.cu"
    k.write_text('#include "h.cuh"\n' + KERNEL.format(name="k1") +
                 "__global__ void k2(int *d) { d[0] = Q Q; }\n")
    r = lint(k)
    assert finding_lines(r) == [4]
    assert any(n.startswith("6:17: function 'k2' not analysed: cannot parse line 6") for n in notes(r))
    no_secret(r)


def test_long_tokens_are_not_quoted(repo):
    k = repo / "k.cu"
    k.write_text("__global__ void k(int *d) { d[0] = 1 " + "x" * 100 + "; }\n")
    (n,) = notes(lint(k))
    assert n == "1:17: function 'k' not analysed: cannot parse line 1 (unsupported C++ or syntax error)"


PTX = """.version 7.0
.target sm_60
.address_size 64
.file 1 "{src}"
.visible .entry k(.param .u64 out)
{{
    .reg .pred %p<3>;
    .reg .b32 %r<4>;
    mov.u32 %r1, %tid.x;
    setp.lt.u32 %p1, %r1, 16;
    .loc 1 2 1
    vote.any.pred %p2, %p1;
    ret;
}}
"""


def test_ptx_loc_outside_the_tree_stays_at_the_ptx_line(tmp_path, repo):
    outside = tmp_path / "k.cu"
    outside.write_text("// a\n// b\n")
    inside = repo / "k.cu"
    inside.write_text("// a\n// b\n")
    a = repo / "a.ptx"
    a.write_text(PTX.format(src=inside))
    assert {f.loc.path for f in lint(a).findings} == {str(inside)}
    a.write_text(PTX.format(src=outside))
    assert {(f.loc.path, f.loc.line) for f in lint(a).findings} == {(str(a), 12)}
    a.write_text(PTX.format(src="/proc/self/status"))
    assert {f.loc.path for f in lint(a).findings} == {str(a)}


def test_ptx_loc_outside_the_tree_is_not_fixed_or_suppressed_there(tmp_path, repo, monkeypatch, run_cli):
    outside = tmp_path / "k.cu"
    outside.write_text("// a\nx = 1; // warplint: ignore\n")
    before = outside.read_bytes()
    (repo / "a.ptx").write_text(PTX.format(src=outside))
    monkeypatch.chdir(repo)
    status, out, _ = run_cli("--no-cache", "a.ptx")
    assert status == 1 and out.startswith("a.ptx:12:5: warning:")  # not suppressed by that file
    run_cli("--no-cache", "--fix", "a.ptx")
    assert outside.read_bytes() == before
    assert "vote.sync.any.pred" in (repo / "a.ptx").read_text()  # the fix went to the linted file


def test_guarded_header_included_again_is_not_read_again(repo, monkeypatch):
    monkeypatch.setattr(pp_mod, "MAX_INCLUDE_BYTES", 100)
    (repo / "g.h").write_text("#ifndef G_H\n#define G_H\ntypedef int g_t;\n#endif\n")  # 48 bytes
    k = repo / "k.cu"
    k.write_text('#include "g.h"\n#include "g.h"\n#include "g.h"\n' + KERNEL.format(name="k"))
    r = lint(k)
    assert not r.diagnostics and finding_lines(r) == [6]


def test_header_with_a_part_for_when_its_guard_is_defined_is_read_again(repo):
    (repo / "g.h").write_text("#ifndef G_H\n#define G_H\n#else\ntypedef int second_t;\n#endif\n")
    toks, _ = pp_mod.preprocess('#include "g.h"\n#include "g.h"\n', str(repo / "k.cu"), {}, [], str(repo))
    assert "second_t" in [t.text for t in toks]


def test_many_typedefs_parse_in_linear_time():
    """Each item's parse once copied every typedef name known so far (10k typedefs: 14 s).  Timed
    as a ratio, so a loaded machine does not fail it: 4x the typedefs must take well under the
    16x a quadratic parse would."""
    import time
    from warplint.frontends.cuda import parse_cuda

    def seconds(n: int) -> float:
        text = "".join(f"typedef int t{i};\n" for i in range(n)) + "__global__ void k(int *d) { d[0] = 1; }\n"
        t = time.perf_counter()
        m = parse_cuda(text, "k.cu", Options())
        assert [f.name for f in m.functions] == ["k"]
        return time.perf_counter() - t

    import gc
    gc.collect()
    gc.disable()  # a full collection costs what the whole test process holds, not this parse
    try:
        small = min(seconds(1500) for _ in range(2))
        large = min(seconds(6000) for _ in range(2))
    finally:
        gc.enable()
    assert large < 9 * small


def test_notes_never_quote_control_characters(repo):
    k = repo / "k.cu"
    k.write_text('#include "\x1b]0;x\x07.h"\n#error "\x1b[2J"\n__global__ void k(int *d) { d[0] = 1 \x1b; }\n')
    r = lint(k)
    assert len(notes(r)) == 3 and not any("\x1b" in n for n in notes(r))
