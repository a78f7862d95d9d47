"""When no default target can build a file, the architecture it is judged for takes the module
already made for the default targets where its preprocessed text is theirs (issue 17: it was
parsed a third time), and is parsed for itself where its text differs."""
from __future__ import annotations

from pathlib import Path

from warplint.options import Options
from warplint.pipeline import lint_file, lint_text

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "cuda"

GUARDED_SM80 = """\
__global__ void k(int *out) {
  int v = __reduce_add_sync(0xffffffff, out[threadIdx.x]);
#if __CUDA_ARCH__ >= 800
  v = __shfl_sync(0xffffffff, v, 0);
#endif
  out[threadIdx.x] = v;
}
"""


def test_the_same_text_is_not_parsed_again(parses):
    r = lint_file(str(FIXTURES / "wl010_reduce_helper_sm80.cu"), Options())
    assert parses == [("sm_60",)]  # sm_60, sm_70 and sm_80 read one text
    assert "judged for sm_80" in r.diagnostics[-1].message
    assert (r.coverage.analysed, r.coverage.total) == (1, 1)


def test_a_text_of_its_own_is_parsed(parses):
    r = lint_text(GUARDED_SM80, "k.cu", Options())
    assert parses == [("sm_60",), ("sm_80",)]
    assert [d.message for d in r.diagnostics if "judged for sm_80" in d.message]
    named = lint_text(GUARDED_SM80, "k.cu", Options(targets=["sm_80"]))
    assert [(f.rule_id, f.loc, f.message) for f in r.findings] == [(f.rule_id, f.loc, f.message) for f in named.findings]
