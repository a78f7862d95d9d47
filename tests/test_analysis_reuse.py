"""A function the same in several preprocessed texts of one file (one per target architecture
the text tests) is analysed once (issue 17): analysis/reuse.py."""
from __future__ import annotations

from pathlib import Path

import warplint.analysis as analysis
import warplint.analysis.reuse as reuse_module
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


def _same_with_module_facts(fn, body, module, table, memo) -> None:
    """A kept analysis's `any_arguments` holds the module's facts and the functions its prologue's
    function can reach (`_any_arguments`): it inlines the same, also the long way (past MAX_SIZE)."""
    from warplint.analysis.inline import inline_calls, varying_inlined, with_varying_arguments
    varying = fn if fn.is_kernel else with_varying_arguments(fn, module, table, body)
    if varying is fn:
        return
    facts, reached = reuse_module.ModuleFacts(module), memo.reachable_table(fn, varying, table)
    assert reuse_module._function_key(varying_inlined(fn, varying, body, module, table)) == \
        reuse_module._function_key(varying_inlined(fn, varying, body, facts, reached))
    assert reuse_module._function_key(inline_calls(varying, module, set(), table)) == \
        reuse_module._function_key(inline_calls(varying, facts, set(), reached))


def test_keys_as_written_are_equal_only_where_the_inlined_keys_are():
    """`key_as_written` (the function and the functions it can reach, as written) stands for `key`
    (the function with its calls inlined): equal keys as written mean equal inlined keys."""
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
                    written = key_as_written(fn, module, table, Options(), memo)
                    body = inline_calls(fn, module, set(), table)
                    reached = memo.reachable(fn, table)
                    named = set()  # (every symbol of the inlined body is reachable, or an inlined copy's)
                    for i in body.body:
                        for o in i.srcs + i.dests if isinstance(i, Instr) else ():
                            reuse_module._symbols(o, named)
                    assert all(n in reached or "@" in n for n in named), (path, fn.name)
                    inlined = key(fn, body, module, Options(), memo, reached)
                    _same_with_module_facts(fn, body, module, table, memo)
                    hits += written in seen
                    assert seen.setdefault(written, inlined) == inlined, (path, fn.name)
    assert hits >= 2  # same_everywhere and helper in TWO_KERNELS' second text, at least


# -- files of one run that include one header -----------------------------------------------------

# Each function of the header calls `hook`, which every includer defines: they are part of the
# includer's code (frontends/cuda/scope.py), analysed on their own there (no function calls them).
SHARED_HEADER = """#pragma once
__device__ int half_sum(int v) {
  if (threadIdx.x % 32 < 16)
    v += __shfl_xor_sync(0xffffffff, hook(v), 1);
  return v;
}
__device__ int through_buffer(int v) {
  buf[threadIdx.x % 32] = hook(v);
  return buf[(threadIdx.x + 1) % 32];
}
struct Acc {
  int n;
  __device__ int add(int v) { n += __shfl_down_sync(0xffffffff, hook(v) + n, 1); return n; }
};
#if __CUDA_ARCH__ >= 700
__device__ unsigned peers(int v) { return __match_any_sync(0xffffffff, hook(v)); }
#else
__device__ unsigned peers(int v) { return __ballot_sync(0xffffffff, hook(v)); }
#endif
"""

INCLUDER = """{decl}
__device__ int hook(int v) {{ return v; }}
#include "shared.cuh"
__global__ void {name}(int *out) {{
  int v = out[threadIdx.x];
  {body}
  out[threadIdx.x] = v;
}}
"""

INCLUDERS = [  # (the file's `buf`: its state space is a fact the header's function reads, its body)
    ("__shared__ int buf[32];", "v = __shfl_sync(0xffffffff, v, 0);"),
    ("__device__ int buf[32];", "v += 1;"),
    ("__shared__ int buf[32];", "v = half_sum(v);"),  # inlined here: analysed in its caller
    ("__shared__ int buf[32];", "v = __shfl_sync(0xffffffff, v, 0);"),  # the first again, as another file
]


def _run_outcome(path, options):
    r = lint_text(Path(path).read_text(), str(path), options)
    return ([(f.rule_id, f.loc, f.message, f.certainty, f.details, f.targets, f.flow) for f in r.findings],
            [(d.loc, d.severity, d.message) for d in r.diagnostics], r.masks)


def _includers(tmp_path) -> list:
    (tmp_path / "shared.cuh").write_text(SHARED_HEADER)
    files = []
    for i, (decl, body) in enumerate(INCLUDERS):
        f = tmp_path / f"k{i}.cu"
        f.write_text(INCLUDER.format(decl=decl, name=f"k{i}", body=body))
        files.append(f)
    return files


OPTIONS = [Options(show_masks=True), Options(targets=["sm_60", "sm_70"], show_masks=True),
           Options(targets=["sm_70"], show_masks=True, block_dim=(16, 1, 1)),
           Options(targets=["sm_70"], show_masks=True, work_bound=5)]


def test_files_sharing_a_header_give_in_one_run_and_any_order_what_each_gives_alone(tmp_path):
    files = _includers(tmp_path)
    runs = [(f, o) for o in OPTIONS for f in files]
    alone = {(str(f), id(o)): _run_outcome(f, o) for f, o in runs}
    for order in (runs, runs[::-1], runs[1::2] + runs[::2]):
        for f, o in order:
            assert _run_outcome(f, o) == alone[str(f), id(o)], (f.name, o)
    assert {r for f in files for r, *_ in alone[str(f), id(OPTIONS[0])][0]} >= {"WL004", "WL007"}
    assert alone[str(files[0]), id(OPTIONS[0])] != alone[str(files[1]), id(OPTIONS[0])]  # `buf` differs


def test_the_analysis_reads_no_option_but_those_in_the_key():
    """`_options_read` holds every option the analyses read: a new one must go into the key."""
    import re
    folder = Path(analysis.__file__).parent
    read = set()
    for p in folder.glob("*.py"):
        text = p.read_text()
        read |= set(re.findall(r"\boptions\.(\w+)", text)) | set(re.findall(r"getattr\(options, \"(\w+)\"", text))
    assert read == {"block_dim", "work_bound"}
    assert reuse_module._options_read(Options(block_dim=(8, 1, 1), work_bound=7)) == ((8, 1, 1), 7)


def test_a_key_holds_the_facts_of_the_names_the_function_reads_only():
    fn = Function("f", False, body=[Instr("st.u32", (), (Addr(Sym("s")), Imm(1)))])
    one, other = Module("a.cu", "cuda"), Module("b.cu", "cuda")
    one.state_spaces.update(s="shared", t="global")  # `t`: not named by f
    other.state_spaces.update(s="shared", u="local")
    other.local_fields["v"] = {0: "x"}  # (`&v` is not named by f)
    assert key(fn, fn, one) == key(fn, fn, other)
    other.state_spaces["s"] = "global"
    assert key(fn, fn, one) != key(fn, fn, other)
    taking = Function("f", False, body=[Instr("mov.u64", (Reg("p"),), (Sym("&v"),))])
    other.state_spaces["&v"] = one.state_spaces["&v"] = "local"
    assert key(taking, taking, one) != key(taking, taking, other)  # v's fields
