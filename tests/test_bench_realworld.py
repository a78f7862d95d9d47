"""bench/realworld.py: its own function scan and the coverage classification (our own snippets)."""
from __future__ import annotations

import importlib.util
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SPEC = importlib.util.spec_from_file_location("realworld", os.path.join(HERE, "..", "bench", "realworld.py"))
rw = importlib.util.module_from_spec(SPEC)
sys.modules.setdefault("realworld", rw)  # dataclasses look their module up
SPEC.loader.exec_module(rw)

SOURCE = """\
#include "x.h"
// __shfl_sync in a comment is no call
#define REDUCE(v) __shfl_xor_sync(0xffffffff, v, 1)
template <typename T, int N = sizeof(T)>
__global__ void __launch_bounds__(256) kern(T *p) {
  if (threadIdx.x < 16) p[0] = __shfl_down_sync(0xffff, p[1], 1);
}
struct Acc {
  __device__ Acc(int a) : v(a), w(a) { __syncwarp(); }
  __device__ float operator()(float x) const { return __ballot_sync(~0u, x > 0); }
  int v, w;
};
MY_KERNEL void macro_qualified(float *p) {
  asm volatile("bar.sync 0;");
}
__device__ int plain(int x) { return x + 1; }
#if CUDA_VERSION < 9000
__device__ int old_api(int x) { return __shfl(x, 0); }
#endif
"""


def by_name(functions):
    return {f.name: f for f in functions}


def test_scan_finds_definitions_with_their_primitives():
    fns = by_name(rw.scan_functions(SOURCE))
    assert [p.text for p in fns["kern"].primitives] == ["__shfl_down_sync"]
    assert (fns["kern"].line, fns["kern"].end) == (5, 7)
    assert [p.text for p in fns["Acc"].primitives] == ["__syncwarp"]  # constructor with initialisers
    assert [p.text for p in fns["operator()"].primitives] == ["__ballot_sync"]
    assert [p.text for p in fns["macro_qualified"].primitives] == ["asm"]  # inline PTX barrier
    assert fns["plain"].primitives == []


def test_group_methods_count_only_in_cooperative_groups_files():
    body = "__device__ void f(G g, V v) { v.any(1); g.sync(); }\n"
    assert rw.scan_functions(body)[0].primitives == []
    cg = "namespace cg = cooperative_groups;\n" + body
    assert [p.text for p in rw.scan_functions(cg)[0].primitives] == [".any", ".sync"]


def test_preprocessed_away_calls_are_not_required(tmp_path):
    path = tmp_path / "k.cu"
    path.write_text(SOURCE)
    live = rw.active_lines(SOURCE, str(path))
    if live is None:
        pytest.skip("warplint preprocessor not importable")
    assert 6 in live and 18 not in live


def result(shown=(), diagnostics=(), status="ok", analysed=()):
    return {"shown": [["k.cu", ln, "op"] for ln in shown], "diagnostics": list(diagnostics), "status": status,
            "analysed": list(analysed)}


def test_classification_full_noted_silent_and_file_error():
    lines = SOURCE.split("\n")
    fns = [f for f in rw.scan_functions(SOURCE) if f.primitives and f.name != "old_api"]  # see the test above
    note = {"path": "k.cu", "line": 9, "severity": "note",
            "message": "function 'Acc' not analysed: member functions of classes are not supported"}
    rw.classify(fns, "k.cu", result(shown=[6], diagnostics=[note], analysed=["kern"]), lines)
    status = {f.name: f.status for f in fns}
    assert status == {"kern": "full", "Acc": "noted", "operator()": "silent", "macro_qualified": "silent"}
    constructs = {f.name: f.construct for f in fns}
    assert constructs["Acc"].startswith("class/struct member function")
    assert constructs["macro_qualified"].startswith("function qualifier macro")
    error = {"path": "k.cu", "line": 1, "severity": "error", "message": "unexpected character '#'"}
    rw.classify(fns, "k.cu", result(diagnostics=[error], status="error"), lines)
    assert {f.status for f in fns} == {"file-error"}


def test_findings_dedupe_over_targets_and_definite_wins():
    f = {"path": "a.cu", "line": 3, "rule_id": "WL007", "certainty": "possible", "targets": ["sm_60"]}
    g = dict(f, certainty="definite", targets=["sm_70"])
    out = rw.dedupe_findings([f, g])
    assert out == {("a.cu", 3, "WL007"): {"certainty": "definite", "message": "", "function": None,
                                          "targets": ["sm_60", "sm_70"]}}


def test_triage_file_parses(tmp_path):
    t = tmp_path / "triage.tsv"
    t.write_text("# comment\nrepo\tpath\tline\trule\tverdict\tfp_class\treason\n"
                 "o/r\tsrc/a.cu\t12\tWL009\tFP\t4\twhy\n")
    rows = rw.load_triage(str(t))
    assert rows[("o/r", "src/a.cu", 12, "WL009")]["fp_class"] == "4"
