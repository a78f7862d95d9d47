"""Architecture-guarded CUDA-C is preprocessed per target (issue 12, class 5): each target is
judged on the text nvcc would compile for it, and targets that see the same text share one parse."""
from __future__ import annotations

from warplint.options import Options
from warplint.pipeline import lint_text

GUARDED = """\
__global__ void k(int *out) {
  int v = out[threadIdx.x];
#if __CUDA_ARCH__ >= 700
  v = __match_any_sync(0xffffffff, v);
#else
  v = __shfl_sync(0xffffffff, v, 0);
#endif
  out[threadIdx.x] = v;
}
"""


def test_each_target_judged_on_its_own_text(parses):
    r = lint_text(GUARDED, "k.cu", Options(targets=["sm_60", "sm_70"]))
    assert [f.rule_id for f in r.findings] == []  # no WL010 for match.sync: sm_60 never sees it
    assert parses == [("sm_60",), ("sm_70",)]
    assert (r.coverage.analysed, r.coverage.total) == (1, 1)


def test_same_text_is_parsed_once(parses):
    same = GUARDED.replace("#if __CUDA_ARCH__ >= 700", "#ifdef __CUDA_ARCH__").replace("0xffffffff, v);", "0xff, v);")
    r = lint_text(same, "k.cu", Options(targets=["sm_70", "sm_80", "sm_90"]))
    assert parses == [("sm_70",)]  # sm_80 and sm_90 see the same text
    assert {f.targets for f in r.findings} == {("sm_70", "sm_80", "sm_90")}
    lint_text(GUARDED.replace("__CUDA_ARCH__", "SOME_FLAG"), "k.cu", Options())
    assert parses[-1] == ("sm_60",)  # the default targets: no architecture test, one parse for both


def test_a_target_with_a_text_of_its_own_is_preprocessed_once(monkeypatch):
    from warplint.frontends.cuda.preprocess import Preprocessor
    runs = []
    real = Preprocessor.run

    def counting(self, text, path, depth=0):
        runs.append(path)
        return real(self, text, path, depth)
    monkeypatch.setattr(Preprocessor, "run", counting)
    r = lint_text(GUARDED, "k.cu", Options(targets=["sm_60", "sm_70"]))
    assert runs == ["k.cu", "k.cu"]  # sm_60's text; sm_70's trace, which is its text too
    assert {f.rule_id for f in r.findings} == set() and (r.coverage.analysed, r.coverage.total) == (1, 1)


def test_value_of_cuda_arch_in_code_separates_targets(parses):
    lint_text("__global__ void k(int *o) { o[0] = __CUDA_ARCH__; }\n", "k.cu", Options(targets=["sm_70", "sm_80"]))
    assert parses == [("sm_70",), ("sm_80",)]


def test_finding_in_shared_code_lists_every_target():
    src = GUARDED.replace("  out[threadIdx.x] = v;", "  if (threadIdx.x % 32 < 8) v = __shfl_sync(0xffffffff, v, 1);\n"
                                                    "  out[threadIdx.x] = __shfl_sync(0xffffffff, v, 0, 24);")
    r = lint_text(src, "k.cu", Options(targets=["sm_60", "sm_70", "sm_80"]))
    by_rule = {(f.rule_id, f.loc.line): f.targets for f in r.findings}
    assert by_rule[("WL004", 8)] == ("sm_70", "sm_80") and by_rule[("WL002", 8)] == ("sm_60",)
    assert by_rule[("WL006", 9)] == ("sm_60", "sm_70", "sm_80")  # one finding from both texts


def test_show_masks_per_text(run_cli, project):
    project.write("k.cu", GUARDED)
    _, out, _ = run_cli("--show-masks", "k.cu")
    assert out.startswith("for sm_60:\nkernel k:\n") and "\nfor sm_70:\nkernel k:\n" in out
    assert "k.cu:4:" in out.split("for sm_70:")[1] and "k.cu:4:" not in out.split("for sm_70:")[0]
