"""A function the same in several preprocessed texts of one file (one per target architecture
the text tests) is analysed once (issue 17): analysis/reuse.py."""
from __future__ import annotations

import warplint.analysis as analysis
from warplint.analysis.reuse import Analyses, key
from warplint.ir import Addr, Function, Imm, Instr, Module, Reg, Sym
from warplint.options import Options
from warplint.pipeline import lint_text

TWO_KERNELS = """\
__device__ int helper(int v) { return __shfl_xor_sync(0xffffffff, v, 1); }

__global__ void same_everywhere(int *out) {
  __shared__ int s[32];
  unsigned lane = threadIdx.x % 32;
  s[lane] = out[threadIdx.x];
  out[threadIdx.x] = s[lane ^ 1] + helper(lane);
}

__global__ void guarded(int *out) {
  int v = out[threadIdx.x];
#if __CUDA_ARCH__ >= 700
  v = __match_any_sync(0xffffffff, v);
#else
  v = __shfl_sync(0xffffffff, v, 0);
#endif
  out[threadIdx.x] = v;
}
"""


def _count_analyses(monkeypatch) -> list[str]:
    seen = []
    real = analysis.analyze_function

    def counting(cfg, *args, **kwargs):
        seen.append(cfg.function.name)
        return real(cfg, *args, **kwargs)
    monkeypatch.setattr(analysis, "analyze_function", counting)
    return seen


def test_a_function_the_same_in_both_texts_is_analysed_once(monkeypatch):
    seen = _count_analyses(monkeypatch)
    both = lint_text(TWO_KERNELS, "k.cu", Options(targets=["sm_60", "sm_70"], show_masks=True))
    assert sorted(seen) == ["guarded", "guarded", "same_everywhere"]
    alone = lint_text(TWO_KERNELS, "k.cu", Options(targets=["sm_70"]))  # one text: nothing to reuse
    race = [f for f in both.findings if f.rule_id == "WL007"]
    assert race and [(f.loc, f.message) for f in race] == [
        (f.loc, f.message) for f in alone.findings if f.rule_id == "WL007"]
    assert both.masks.count("kernel same_everywhere:") == 2  # listed for each text, as before


def test_a_copy_has_notes_of_its_own():
    module = Module("k.cu", "cuda")
    fn = Function("k", True, body=[Instr("bar.sync", (), (Imm(0),))])
    fa = analysis.analyze_function(analysis.build_cfg(fn), module, Options())
    reuse = Analyses()
    k = key(fn, fn, module)
    reuse.put(k, fa)
    fa.notes.append("a check's note, for one target")
    copy = reuse.get(k)
    assert copy is not fa and copy.notes == [] and copy.masks is fa.masks


def _key_of(*srcs) -> tuple:
    fn = Function("f", False, ["a"], body=[Instr("st.shared.u32", (), srcs)])
    return key(fn, fn, Module("k.cu", "cuda"))


def test_numbers_are_told_apart_by_type():
    assert Imm(1) == Imm(1.0) and Imm(0.0) == Imm(-0.0)  # equal as dataclasses...
    assert _key_of(Addr(Reg("a")), Imm(1)) != _key_of(Addr(Reg("a")), Imm(1.0))  # ...not as keys
    assert _key_of(Addr(Reg("a")), Imm(0.0)) != _key_of(Addr(Reg("a")), Imm(-0.0))
    assert _key_of(Addr(Sym("s"), 4), Imm(1)) == _key_of(Addr(Sym("s"), 4), Imm(1))


def test_the_modules_state_spaces_are_part_of_the_key():
    fn = Function("f", False, body=[Instr("st.u32", (), (Addr(Sym("s")), Imm(1)))])
    shared, plain = Module("k.cu", "cuda"), Module("k.cu", "cuda")
    shared.state_spaces["s"] = "shared"
    assert key(fn, fn, shared) != key(fn, fn, plain)


def test_one_text_makes_no_keys(monkeypatch):
    keys = []
    real = analysis.written_key
    monkeypatch.setattr(analysis, "written_key", lambda *a: keys.append(a) or real(*a))
    lint_text(TWO_KERNELS, "k.cu", Options(targets=["sm_70", "sm_80"]))  # one text for both
    assert keys == []
    lint_text(TWO_KERNELS, "k.cu", Options(targets=["sm_60", "sm_70"]))
    assert len(keys) == 4  # the two kernels (helper is inlined), in each of the two texts


def test_keys_as_written_are_equal_only_where_the_inlined_keys_are():
    """`key_as_written` (the function and the functions it can reach, as written) stands for `key`
    (the function with its calls inlined): equal keys as written mean equal inlined keys."""
    from pathlib import Path

    from warplint.analysis.inline import function_table, inline_calls
    from warplint.analysis.reuse import key_as_written
    from warplint.pipeline import parse_variants
    fixtures = Path(__file__).resolve().parent.parent / "fixtures"
    hits = 0
    inputs = [(p.read_text(), str(p)) for p in sorted(fixtures.rglob("*.cu"))] + [(TWO_KERNELS, "k.cu")]
    for text, path in inputs:
        try:
            variants = parse_variants(text, path, Options(targets=["sm_60", "sm_70", "sm_90"]))
        except Exception:
            continue
        memo, seen = Analyses(), {}
        for module, _ in variants:
            table = function_table(module)
            for fn in module.functions:
                if fn.body:
                    written = key_as_written(fn, module, table, memo)
                    inlined = key(fn, inline_calls(fn, module, set(), table), module)
                    hits += written in seen
                    assert seen.setdefault(written, inlined) == inlined, (path, fn.name)
    assert hits >= 2  # same_everywhere and helper in TWO_KERNELS' second text, at least
