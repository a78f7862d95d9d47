"""With no targets named, a CUDA file is judged for the default targets it can be built for
(availability.required_arch): code that uses an instruction a default target lacks, outside any
`__CUDA_ARCH__` guard, does not compile for it, so the file states its own minimum architecture;
named targets are always judged (WL010 there).  The fixtures are also run by the harness with
named targets (tests/test_fixtures.py), where they keep their findings."""
from __future__ import annotations

from pathlib import Path

from warplint.options import Options
from warplint.pipeline import lint_file, lint_text

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "cuda"


def _notes(result) -> list[str]:
    return [f"{d.loc.line}: {d.message}" for d in result.diagnostics if d.severity == "note"]


def test_sm80_intrinsic_outside_a_guard_makes_the_file_sm80():
    r = lint_file(str(FIXTURES / "wl010_reduce_helper_sm80.cu"), Options())
    assert r.findings == []
    assert _notes(r) == ["8: '__reduce_add_sync' needs sm_80: this code cannot be built for the default targets "
                         "sm_60, sm_70, so it is judged for sm_80 (name the targets with --target or `targets` "
                         "in the configuration)"]
    assert (r.coverage.analysed, r.coverage.total) == (1, 1)


def test_named_targets_are_always_judged():
    r = lint_file(str(FIXTURES / "wl010_reduce_helper_sm80.cu"), Options(targets=["sm_60", "sm_70"]))
    assert [(f.rule_id, f.loc.line, f.targets) for f in r.findings] == [("WL010", 8, ("sm_60", "sm_70"))]
    assert _notes(r) == []


def test_sm70_intrinsic_keeps_sm70_and_drops_sm60():
    src = ("__global__ void k(const int *keys, int *out) {\n"
           "  int v = __match_any_sync(0xffffffff, keys[threadIdx.x]);\n"
           "  if (threadIdx.x % 32 < 16)\n"
           "    v = __shfl_sync(0xffffffff, v, 0);\n"
           "  out[threadIdx.x] = v;\n}\n")
    r = lint_text(src, "k.cu", Options())
    assert {(f.rule_id, f.targets) for f in r.findings} == {("WL004", ("sm_70",))}  # no WL010, no sm_60 WL002
    assert _notes(r) == ["2: '__match_any_sync' needs sm_70: this code cannot be built for the default target "
                         "sm_60, so it is judged for sm_70 (name the targets with --target or `targets` in the "
                         "configuration)"]


def test_inline_asm_in_code_a_kernel_calls_decides():
    clean = lint_file(str(FIXTURES / "default_targets_sm90_asm_ifelse.cu"), Options())
    assert clean.findings == []
    assert [n.split(":", 1)[1].split(",")[0] for n in _notes(clean)] == [" 'elect.sync' needs sm_90: this code cannot "
                                                                          "be built for the default targets sm_60"]
    assert "judged for sm_90" in _notes(clean)[0]
    buggy = lint_file(str(FIXTURES / "default_targets_sm90_asm_half_warp.cu"), Options())
    assert [(f.rule_id, f.loc.line, f.targets) for f in buggy.findings] == [("WL004", 18, ("sm_90",))]


def test_inline_asm_in_an_uncalled_helper_does_not_decide():
    r = lint_file(str(FIXTURES / "default_targets_uncalled_asm_helper.cu"), Options())
    assert {(f.rule_id, f.targets) for f in r.findings} == {("WL002", ("sm_60",))}
    assert _notes(r) == []


def test_guarded_code_keeps_the_default_targets():
    r = lint_file(str(FIXTURES / "arch_guarded_match.cu"), Options())
    assert [(f.rule_id, f.targets) for f in r.findings] == [("WL002", ("sm_60",))]
    assert _notes(r) == []


def test_a_header_without_kernels_counts_every_helper():
    src = ("__device__ __forceinline__ unsigned long long arrive(unsigned long long *bar) {\n"
           "  unsigned long long state;\n"
           "  asm volatile(\"mbarrier.arrive.shared.b64 %0, [%1];\" : \"=l\"(state) : \"l\"(bar));\n"
           "  return state;\n}\n"
           "__device__ int lead(int v) { return __shfl_sync(0xffffffff, v, 0); }\n")
    r = lint_text(src, "sync.cuh", Options())
    assert [n.split(":", 1)[0] for n in _notes(r)] == ["3"]
    assert "'mbarrier.arrive.shared.b64' needs sm_80" in _notes(r)[0] and "judged for sm_80" in _notes(r)[0]
