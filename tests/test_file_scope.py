"""A file's report covers its own code and the code connected to it by calls (issue 17:
frontends/cuda/scope.py): functions of an included header that the file's functions do not
reach, and that reach none of them, are left to the header's own lint, and are not parsed,
lowered or analysed for the file."""
from __future__ import annotations

import pytest

import warplint.analysis as analysis
import warplint.frontends.cuda.frontend as frontend
from warplint.frontends.cuda.scope import FileCode
from warplint.options import Options
from warplint.pipeline import lint_file

HEADER = """\
#pragma once
__device__ int unreached(int v) {            // a bug no function of the includer reaches
  if (threadIdx.x % 32 < 16)
    v = __shfl_sync(0xffffffff, v, 0);
  return v;
}
__device__ int reached(int v) {              // called by the includer's kernel
  if (threadIdx.x % 32 < 8)
    v = __shfl_sync(0xffffffff, v, 1);
  return v;
}
__device__ int calls_back(int v) {           // calls the includer's function: its code too
  if (threadIdx.x % 32 < 4)
    v = __shfl_sync(0xffffffff, callback(v), 2);
  return v;
}
struct Worker {
  int n;
  __device__ ~Worker() { if (threadIdx.x % 32 < 2) n = __shfl_sync(0xffffffff, n, 3); }
};
__device__ void scoped_worker(int *out) {    // never called: the destructor is not the file's code
  Worker w{out[0]};
}
"""

INCLUDER = """\
__device__ int callback(int v);
#include "lib.cuh"
__device__ int callback(int v) { return v + 1; }
__global__ void k(int *out) {
  out[threadIdx.x] = reached(out[threadIdx.x]);
}
"""


def _project(tmp_path):
    (tmp_path / "lib.cuh").write_text(HEADER)
    (tmp_path / "k.cu").write_text(INCLUDER)
    return tmp_path / "k.cu", tmp_path / "lib.cuh"


def _lines(result, path) -> set[int]:
    return {f.loc.line for f in result.findings if f.loc.path == str(path)}


def test_the_file_reports_its_code_and_what_it_reaches_the_header_the_rest(tmp_path, monkeypatch):
    k, lib = _project(tmp_path)
    monkeypatch.chdir(tmp_path)
    seen = []
    real = analysis.analyze_function
    monkeypatch.setattr(analysis, "analyze_function", lambda cfg, *a, **kw: seen.append(cfg.function.name) or
                        real(cfg, *a, **kw))
    of_file = lint_file(str(k), Options(targets=["sm_70"], use_cache=False))
    assert _lines(of_file, lib) == {9, 14}  # `reached` (in k), `calls_back` (on its own)
    assert sorted(set(seen)) == ["calls_back", "k"]
    of_header = lint_file(str(lib), Options(targets=["sm_70"], use_cache=False))
    assert {4, 9, 19} <= _lines(of_header, lib)  # the header's own lint has the rest


def _everything(chunks, path) -> FileCode:
    return FileCode(chunks, set(), frozenset())


@pytest.mark.parametrize("targets", [["sm_70"], ["sm_60", "sm_70"], None])
def test_what_the_file_reports_of_its_own_code_does_not_change(tmp_path, monkeypatch, targets):
    """Leaving out the header's other functions changes nothing the file reports of its own code:
    findings, their certainty, notes and the masks of its functions."""
    k, lib = _project(tmp_path)
    monkeypatch.chdir(tmp_path)
    options = Options(targets=targets, use_cache=False, show_masks=True)
    scoped = lint_file(str(k), options)
    monkeypatch.setattr(frontend, "file_code", _everything)
    whole = lint_file(str(k), options)

    def own(result):
        return ([(f.rule_id, f.loc, f.message, f.certainty, f.targets) for f in result.findings
                 if f.loc.path == str(k)], [d for d in result.diagnostics if d.loc.path == str(k)])
    assert own(scoped) == own(whole)
    assert "kernel k:" in scoped.masks and "function unreached" not in scoped.masks
    assert "function unreached" in whole.masks


def test_a_function_that_may_decide_the_targets_is_lowered_but_not_analysed(tmp_path, monkeypatch):
    """`__match_any_sync` (sm_70+) in a header function nothing reaches: the file cannot be built
    for sm_60 (nvcc: undefined there), as before, but the function is the header's to report."""
    (tmp_path / "lib.cuh").write_text("""\
#pragma once
__device__ unsigned peers(int v) {
  if (threadIdx.x % 32 < 16) return __match_any_sync(0xffffffff, v);
  return 0;
}
""")
    (tmp_path / "k.cu").write_text('#include "lib.cuh"\n__global__ void k(int *o) { o[0] = __shfl_sync(0xffffffff, o[1], 0); }\n')
    monkeypatch.chdir(tmp_path)
    result = lint_file(str(tmp_path / "k.cu"), Options(use_cache=False, show_masks=True))
    assert "for sm_60" not in result.masks and "function peers" not in result.masks
    assert any("'match.any.sync' needs sm_70" in d.message or "needs sm_70" in d.message for d in result.diagnostics)
    assert not [f for f in result.findings if "lib.cuh" in f.loc.path]


def test_a_destructor_is_a_function_of_its_own_name():
    """The C++ layer names a destructor `S__dtor`: a name token (it was the `~` operator's kind),
    so the item's function is known by name."""
    from warplint.frontends.cuda.cxx import desugar
    from warplint.frontends.cuda.lexer import tokenize
    from warplint.frontends.cuda.rewrite import Rewriter
    rw = Rewriter()
    toks, rw.facts = desugar([t for t in tokenize("struct S { int n; __device__ ~S() { n = 0; } };\n", "k.cu")
                              if t.kind != "nl"], rw.typedefs)
    chunks = frontend.split_chunks(rw.run(toks))
    assert [c.name_tok.text for c in chunks if c.is_func] == ["S__dtor"]
    assert [c.name_tok.kind for c in chunks if c.is_func] == ["id"]
