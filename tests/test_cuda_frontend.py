"""CUDA-C front end: lowering of each construct to the PTX-shaped warp IR."""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from warplint.cfg import CFG
from warplint.errors import InputError
from warplint.frontends.cuda import parse_cuda
from warplint.ir import Addr, Imm, Instr, Label, Module, Reg, Sym
from warplint.options import Options

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "cuda" / "frontend"


def parse(src: str, path: str = "k.cu", **kw) -> Module:
    return parse_cuda(src, path, Options(**kw))


def fn(m: Module, name: str):
    """A function by its name, or by its name in the namespace it is defined in (`ns::f`)."""
    return next(f for f in m.functions if name in (f.name, f.display_name, f.display_name.rsplit("::", 1)[-1]))


def instrs(f, op=None):
    return [i for i in f.body if isinstance(i, Instr) and (op is None or i.op == op)]


def one(f, opcode):
    xs = [i for i in instrs(f) if i.opcode == opcode]
    assert len(xs) == 1, (opcode, instrs(f))
    return xs[0]


# -- module shape ---------------------------------------------------------------------------
def test_kernels_device_functions_and_host_skipped():
    m = parse("""
__device__ int helper(int x) { return x + 1; }
__global__ void k(int *a, int n) { a[0] = helper(n); }
void host() { k<<<1, 32>>>(0, 1); }
int host2(int y) { return y; }
""", targets=["sm_80"])
    assert m.language == "cuda" and m.target == "sm_80" and m.ptx_version is None
    assert [f.name for f in m.functions] == ["helper", "k"]
    assert fn(m, "k").is_kernel and not fn(m, "helper").is_kernel
    assert fn(m, "k").params == ["a", "n"]
    h = fn(m, "helper")
    assert h.params == ["x"] and h.ret_params == ["$ret"]
    assert [i.opcode for i in instrs(h)][-2:] == ["mov.s32", "ret"]
    assert instrs(h)[-2].dests == (Reg("$ret"),)
    call = instrs(fn(m, "k"), "call")[0]
    assert call.srcs == (Sym("helper"), Reg("n")) and len(call.dests) == 1
    assert not m.diagnostics


def test_empty_file_is_empty_module():
    m = parse("")
    assert m.functions == [] and m.diagnostics == []
    assert parse("  \n// only a comment\n").functions == []


def test_builtins_and_warpsize():
    m = parse("""__global__ void k(int *a) {
  a[0] = threadIdx.x + blockIdx.y + blockDim.z + gridDim.x + warpSize;
}""")
    regs = {s.name for i in instrs(fn(m, "k")) for s in i.srcs if isinstance(s, Reg)}
    assert {"%tid.x", "%ctaid.y", "%ntid.z", "%nctaid.x"} <= regs
    assert any(Imm(32) in i.srcs for i in instrs(fn(m, "k")))


def test_shadowed_variables_renamed():
    m = parse("""__global__ void k(int *a) {
  int x = 1;
  { int x = 2; a[x] = x; }
  a[0] = x;
}""")
    dests = [d.name for i in instrs(fn(m, "k"), "mov") for d in i.dests]
    assert "x" in dests and "x$1" in dests


def test_arithmetic_opcodes():
    m = parse("""__global__ void k(int *a, unsigned u, float f, double d, long long l) {
  int i = threadIdx.x;
  a[0] = i * 3 + i / 2 - i % 5;
  a[1] = (u >> 2) | (u << 1) ^ (u & 7);
  a[2] = i >> 1;
  a[3] = -i + ~i;
  a[4] = (int)(f * 2.0f + f / 3.0f);
  a[5] = (int)(d - 1.0);
  a[6] = (int)(l + 1);
  a[7] = u % 3;
}""")
    ops = {i.opcode for i in instrs(fn(m, "k"))}
    for want in ["mul.lo.s32", "div.s32", "rem.s32", "add.s32", "sub.s32", "shr.u32", "shl.b32", "or.b32",
                 "xor.b32", "and.b32", "shr.s32", "neg.s32", "not.b32", "mul.f32", "div.f32", "add.f32",
                 "sub.f64", "add.s64", "rem.u32", "cvt.s32.f32"]:
        assert want in ops, (want, sorted(ops))


def test_conditions_and_branches():
    src = """__global__ void k(int *a, int n) {
  int i = threadIdx.x;
  if ((i & 31) < 16 && n > 0 || !(i == 3)) {
    a[i] = 1;
  } else {
    a[i] = 2;
  }
  a[0] = i > 2 ? i : n;
}"""
    m = parse(src)
    f = fn(m, "k")
    ops = [i.opcode for i in instrs(f)]
    assert "setp.lt.s32" in ops and "setp.gt.s32" in ops and "setp.eq.s32" in ops
    assert "and.pred" in ops and "or.pred" in ops and "not.pred" in ops and "selp.s32" in ops
    bra = [i for i in instrs(f, "bra") if i.guard]
    assert len(bra) == 1
    assert bra[0].guard[1] is True  # @!p bra else
    assert (bra[0].loc.line, bra[0].loc.col) == (3, 7)  # start of the condition, its '(' included
    assert bra[0].srcs[0].name in {l.name for l in f.body if isinstance(l, Label)}
    CFG(f)


def test_int_condition_converted_to_predicate():
    m = parse("__global__ void k(int *a, int n) { if (n) a[0] = 1; }")
    setp = instrs(fn(m, "k"), "setp")[0]
    assert setp.opcode == "setp.ne.s32" and setp.srcs == (Reg("n"), Imm(0))


def test_loops_break_continue_switch_goto():
    m = parse((FIXTURES / "07_control_flow.cu").read_text(), str(FIXTURES / "07_control_flow.cu"))
    f = fn(m, "flow")
    cfg = CFG(f)
    assert len(cfg.blocks) > 8
    eqs = [i for i in instrs(f, "setp") if i.opcode.startswith("setp.eq")]
    assert len(eqs) >= 4  # 3 case compares + acc == 7 ...
    labels = [l.name for l in f.body if isinstance(l, Label)]
    assert len(labels) == len(set(labels)) and any(l.startswith("done") for l in labels)


def test_loop_branch_locations():
    m = parse("""__global__ void k(int *a, int n) {
  for (int i = threadIdx.x; i < n; i += 32)
    a[i] = 0;
  while (n > 3) n--;
  do { n++; } while ((n & 31) != 0);
}""")
    f = fn(m, "k")
    guarded = [i for i in instrs(f, "bra") if i.guard]
    assert [(b.loc.line, b.loc.col) for b in guarded] == [(2, 29), (4, 10), (5, 22)]
    back = [i for i in instrs(f, "bra") if not i.guard]
    assert [(b.loc.line, b.loc.col) for b in back] == [(2, 3), (4, 3)]


# -- memory ---------------------------------------------------------------------------------
def test_shared_global_const_and_address_arithmetic():
    m = parse("""__constant__ float coef[4];
__device__ int counter;
extern __shared__ float dyn[];
__global__ void k(float *out) {
  __shared__ volatile float s[64];
  __shared__ double t[8][8];
  s[threadIdx.x] = out[threadIdx.x] * coef[1];
  t[threadIdx.y][threadIdx.x] = dyn[2];
  out[0] = s[threadIdx.x + 1] + counter;
  atomicAdd(&counter, 1);
}""")
    assert m.state_spaces == {"coef": "const", "counter": "global", "dyn": "shared", "s": "shared", "t": "shared"}
    f = fn(m, "k")
    ops = [i.opcode for i in instrs(f)]
    assert "st.volatile.shared.f32" in ops and "ld.volatile.shared.f32" in ops
    assert "ld.global.f32" in ops and "ld.const.f32" in ops and "st.shared.f64" in ops
    assert "ld.shared.f32" in ops and "ld.global.s32" in ops and "atom.global.add.s32" in ops
    st = one(f, "st.volatile.shared.f32")
    a = st.srcs[0]
    assert isinstance(a, Addr) and a.offset == 0 and isinstance(a.base, Reg)
    # mov.u64 $a, s ; mul.wide ... 4 ; add.s64
    movs = [i for i in instrs(f, "mov") if i.srcs == (Sym("s"),)]
    assert movs and movs[0].opcode == "mov.u64"
    wide = [i for i in instrs(f, "mul") if "wide" in i.mods]
    assert any(i.srcs[1] == Imm(4) for i in wide)
    assert any(i.srcs[1] == Imm(64) for i in wide)  # row of t: 8 doubles


def test_element_sizes_and_local_arrays():
    m = parse("""__global__ void k(char *c, short *s, long long *l, double *d, int **pp) {
  int loc[4];
  int i = threadIdx.x;
  loc[i & 3] = c[i] + s[i];
  l[i] = d[i] + loc[0] + (long long)pp[i];
}""")
    f = fn(m, "k")
    sizes = {i.srcs[1].value for i in instrs(f, "mul") if "wide" in i.mods}
    assert {1, 2, 4, 8} <= sizes
    ops = [i.opcode for i in instrs(f)]
    assert "st.local.s32" in ops and "ld.global.s8" in ops and "ld.global.s16" in ops


# -- warp intrinsics -----------------------------------------------------------------------
def test_shuffles_exact_opcodes_and_c_operand():
    src = """__global__ void k(int *a, int w) {
  int v = a[threadIdx.x];
  v = __shfl_sync(0xffffffff, v, 3);
  v = __shfl_up_sync(0xffff, v, 1, 16);
  v = __shfl_down_sync(0xffffffff, v, 2, 8);
  v = __shfl_xor_sync(0xffffffff, v, 4);
  v = __shfl(v, 0);
  v = __shfl_up(v, 1);
  v = __shfl_down(v, 1, 16);
  v = __shfl_xor(v, 1);
  v = __shfl_sync(0xffffffff, v, 0, w);
  a[0] = v;
}"""
    f = fn(parse(src), "k")
    sh = instrs(f, "shfl")
    assert [i.opcode for i in sh] == ["shfl.sync.idx.b32", "shfl.sync.up.b32", "shfl.sync.down.b32",
                                      "shfl.sync.bfly.b32", "shfl.idx.b32", "shfl.up.b32", "shfl.down.b32",
                                      "shfl.bfly.b32", "shfl.sync.idx.b32"]
    assert sh[0].srcs[1:] == (Imm(3), Imm(0x1F), Imm(0xFFFFFFFF))
    assert sh[1].srcs[1:] == (Imm(1), Imm(16 << 8), Imm(0xFFFF))
    assert sh[2].srcs[2] == Imm((24 << 8) | 0x1F)
    assert sh[4].srcs[1:] == (Imm(0), Imm(0x1F))
    assert sh[5].srcs[2] == Imm(0)
    assert sh[6].srcs[2] == Imm((16 << 8) | 0x1F)
    assert isinstance(sh[8].srcs[2], Reg)  # computed width
    assert sh[0].text == "__shfl_sync"
    assert (sh[0].loc.line, sh[0].loc.col, sh[0].loc.end_line, sh[0].loc.end_col) == (3, 7, 3, 36)
    assert (sh[3].loc.col, sh[3].loc.end_col) == (7, 40)


def test_votes_and_misc_intrinsics():
    src = """__global__ void k(int *a, int n) {
  int p = a[threadIdx.x];
  unsigned b = __ballot_sync(0xffffffff, p > 0);
  int x = __any_sync(b, p) + __all_sync(b, p < n) + __uni_sync(b, n);
  x += __any(p) + __all(p) + __ballot(p);
  unsigned m = __activemask();
  __syncwarp();
  __syncwarp(m);
  __syncthreads();
  x += __syncthreads_count(p) + __syncthreads_and(p) + __syncthreads_or(p);
  x += __lanemask_lt() + __popc(m) + __ffs(m) + __clz(m) + __brev(m);
  a[0] = x;
}"""
    f = fn(parse(src), "k")
    ops = [i.opcode for i in instrs(f)]
    for want in ["vote.sync.ballot.b32", "vote.sync.any.pred", "vote.sync.all.pred", "vote.sync.uni.pred",
                 "vote.any.pred", "vote.all.pred", "vote.ballot.b32", "activemask.b32", "bar.warp.sync",
                 "bar.sync", "bar.red.popc.u32", "bar.red.and.pred", "bar.red.or.pred", "popc.b32",
                 "ffs.b32", "clz.b32", "brev.b32"]:
        assert want in ops, want
    ballot = one(f, "vote.sync.ballot.b32")
    assert ballot.srcs[1] == Imm(0xFFFFFFFF) and ballot.srcs[0].name.startswith("$p")
    syncs = instrs(f, "bar")
    assert syncs[0].opcode == "bar.warp.sync" and syncs[0].srcs == (Imm(0xFFFFFFFF),)
    assert syncs[1].srcs == (Reg("m"),)
    assert one(f, "bar.sync").srcs == (Imm(0),)
    lm = [i for i in instrs(f, "mov") if i.srcs == (Reg("%lanemask_lt"),)]
    assert lm and lm[0].opcode == "mov.u32"


def test_match_and_redux():
    f = fn(parse((FIXTURES / "11_match_reduce.cu").read_text()), "mr")
    ops = [i.opcode for i in instrs(f)]
    assert "match.any.sync.b32" in ops and "match.all.sync.b32" in ops
    assert "redux.sync.add.u32" in ops and "redux.sync.min.s32" in ops and "redux.sync.xor.b32" in ops
    ma = one(f, "match.all.sync.b32")
    assert len(ma.dests) == 2 and ma.srcs[1] == Imm(0xFFFFFFFF)


def test_inline_asm_laneid_flows():
    f = fn(parse((FIXTURES / "06_inline_asm.cu").read_text()), "lane_id")
    movs = instrs(f, "mov")
    assert movs[0].opcode == "mov.u32" and movs[0].srcs == (Reg("%laneid"),)
    assert movs[0].dests[0].name.startswith("$asm")
    assert movs[1].dests == (Reg("ret"),) and movs[1].srcs == movs[0].dests
    assert movs[0].loc.line == 4


def test_lane_masks_through_analysis():
    """The nvcc-checked mask fixtures, read from their .cu sources by this front end."""
    from warplint.analysis import analyze_module
    sys.path.insert(0, str(ROOT / "tests"))
    from test_masks import _annotations, _matches
    src_dir = ROOT / "fixtures" / "ptx" / "masks" / "src"
    checked = 0
    for src in sorted(src_dir.glob("*.cu")):
        m = parse_cuda(src.read_text(), str(src), Options())
        assert not m.diagnostics, m.diagnostics
        wanted = _annotations(src)
        for fa in analyze_module(m, Options()):
            items = [(o.instr, o.active, o.member) for o in fa.warp_ops] + [(b.instr, b.active, None) for b in fa.barriers]
            for ins, active, member in items:
                w = wanted.get(ins.loc.line)
                if not w:
                    continue
                checked += 1
                assert "active" not in w or _matches(w["active"], active, fa.lits), (src.name, ins.loc.line)
                assert "member" not in w or member is None or _matches(w["member"], member, fa.lits), (src.name, ins.loc.line)
    assert checked >= 40


# -- preprocessing --------------------------------------------------------------------------
ARCH_SRC = """__global__ void k(int *a) {
#if __CUDA_ARCH__ >= 700
  a[0] = __shfl_sync(0xffffffff, a[1], 0);
#else
  a[0] = __shfl(a[1], 0);
#endif
#if CUDA_VERSION < 9000
  a[2] = __ballot(1);
#endif
}"""


@pytest.mark.parametrize("target,want", [(["sm_60"], "shfl.idx.b32"), (["sm_80"], "shfl.sync.idx.b32"),
                                         (None, "shfl.sync.idx.b32")])
def test_arch_guards(target, want):
    f = fn(parse(ARCH_SRC, targets=target), "k")
    assert [i.opcode for i in instrs(f, "shfl")] == [want]
    assert not instrs(f, "vote")


def test_defines_and_macro_locations():
    src = "#define MASK FULL\n__global__ void k(int *a) {\n  a[0] = __shfl_sync(MASK, a[1], SRC);\n}\n"
    f = fn(parse(src, defines={"FULL": "0xffffffff", "SRC": "5"}), "k")
    sh = instrs(f, "shfl")[0]
    assert sh.srcs[1] == Imm(5) and sh.srcs[3] == Imm(0xFFFFFFFF)
    assert (sh.loc.line, sh.loc.col) == (3, 10)


def test_macro_expanded_statement_located_at_invocation():
    src = "#define RED(v) v += __shfl_xor_sync(0xffffffff, v, 1)\n__global__ void k(int *a) {\n  int v = a[0];\n  RED(v);\n  a[0] = v;\n}\n"
    sh = instrs(fn(parse(src), "k"), "shfl")[0]
    assert (sh.loc.line, sh.loc.col) == (4, 3)


def test_local_include_followed(tmp_path):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "h.cuh").write_text("#define W 16\n__device__ int lane() { return threadIdx.x & 31; }\n")
    (tmp_path / "a.cuh").write_text('#include "inc/h.cuh"\n')
    src = '#include <cstdio>\n#include "a.cuh"\n#include "other.cuh"\n__global__ void k(int *o) { o[0] = lane() < W; }\n'
    m = parse_cuda(src, str(tmp_path / "k.cu"), Options(include_paths=[str(tmp_path / "inc")]))
    assert [f.name for f in m.functions] == ["lane", "k"]
    lane = fn(m, "lane")
    assert lane.loc.path.endswith("h.cuh") and lane.loc.line == 2
    src2 = '#include "other.cuh"\n__global__ void k(int *o) { o[0] = lane(); }\n'
    (tmp_path / "inc" / "other.cuh").write_text("__device__ int lane() { return 1; }\n")
    m2 = parse_cuda(src2, str(tmp_path / "k.cu"), Options(include_paths=[str(tmp_path / "inc")]))
    assert [f.name for f in m2.functions] == ["lane", "k"]


# -- C++ subset -----------------------------------------------------------------------------
def test_cpp_isms_fixture():
    m = parse((FIXTURES / "08_cpp_isms.cu").read_text(), "08.cu")
    assert not m.diagnostics
    cpp = fn(m, "cpp")
    assert cpp.is_kernel and cpp.params == ["out", "in"]
    assert instrs(cpp, "shfl")[0].srcs[3] == Imm(0xFFFFFFFF)
    assert fn(m, "is_leader").params == ["lane"]


def test_template_function():
    m = parse((FIXTURES / "09_templates.cu").read_text())
    assert not m.diagnostics
    assert {f.name for f in m.functions} == {"tile_sum", "tile_sum__values_0", "use"}
    call = instrs(fn(m, "use"), "call")[0]
    assert call.srcs[0] == Sym("tile_sum__values_0")  # the copy with N = 16
    assert Imm(0x101F) in instrs(fn(m, "tile_sum__values_0"), "shfl")[0].srcs  # width 16: c = (32 - 16) << 8 | 31
    assert Imm(0x101F) not in instrs(fn(m, "tile_sum"), "shfl")[0].srcs  # N unknown


def test_unknown_types_are_opaque():
    m = parse("""__global__ void k(MyType *p, Handle h, int n) {
  MyType v = p[threadIdx.x];
  p[0] = v;
}""")
    assert not m.diagnostics and fn(m, "k").params == ["p", "h", "n"]


def test_brace_cast_of_a_number_type_is_a_cast():
    """`T{x}` of a number type, a type parameter or a type not known here converts x, as `(T)x`
    does; braces of a struct, or of several values, stay an opaque value made of them."""
    m = parse("""struct Pair { int a; };
template <typename Index>
__global__ void k(long long *out, Pair *pairs) {
  out[0] = index_type{threadIdx.x} + Index{blockDim.x} * (long long){blockIdx.x};
  pairs[0] = Pair{threadIdx.x};
}""")
    f = fn(m, "k")
    called = [i.srcs[0].name for i in instrs(f, "call")]
    assert called == ["$initlist"], called  # only the struct's braces
    converted = {i.srcs[0].name for i in instrs(f, "cvt")}
    assert {"%tid.x", "%ntid.x", "%ctaid.x"} <= converted, instrs(f)


# -- bad input ------------------------------------------------------------------------------
def test_unparseable_function_is_a_note_rest_analysed():
    m = parse("""__global__ void good1(int *a) { a[0] = 1; }
__global__ void bad(int *a) { a[0] = @@@; }
__device__ int good2(int x) { return x; }
""")
    assert [f.name for f in m.functions] == ["good1", "good2"]
    assert len(m.diagnostics) == 1
    d = m.diagnostics[0]
    assert d.severity == "note" and d.message.startswith("function 'bad' not analysed: ")
    assert (d.loc.line, d.loc.col) == (2, 17)


def test_unbalanced_braces_and_garbage():
    for src in ["__global__ void k(int *a) { if (a) { a[0] = 1; }\n",
                "}}}} ((( garbage ][ \n",
                "__global__ void k(int *a) { a[0] = 1; }}\n",
                "#if 1\n__global__ void k() {}\n",
                "\x01\x02 __global__",
                "#define F(x) F(x)\n__global__ void k(int *a) { a[0] = F(1); }\n"]:
        try:
            m = parse(src)
        except InputError as e:
            assert e.loc.line >= 1
            continue
        assert isinstance(m, Module)


def test_deep_nesting_is_input_error_not_crash():
    src = "__global__ void k(int *a) { int x = " + "(" * 5000 + "1" + ")" * 5000 + "; }"
    with pytest.raises(InputError):
        parse(src)
    src = "__global__ void k(int *a) { " + "{" * 3000 + "}" * 3000 + " }"
    with pytest.raises(InputError):
        parse(src)
    src = "__global__ void k(int *a) { int x = 1" + " + 1" * 3000 + "; a[0] = x; }"
    m = parse(src)  # long but flat: analysed or a note, never a crash
    assert isinstance(m, Module)


def test_all_fixtures_parse_clean():
    files = sorted(FIXTURES.glob("*.cu"))
    assert len(files) >= 15
    for p in files:
        m = parse_cuda(p.read_text(), str(p), Options())
        assert m.diagnostics == [], (p.name, m.diagnostics)
        assert m.functions, p.name
        for f in m.functions:
            CFG(f)
            for i in f.body:
                assert i.loc is not None and i.loc.line >= 1 and i.loc.col >= 1
                # locations are in the fixture itself or a header it includes, never a temp file
                assert Path(i.loc.path).resolve().parent == p.resolve().parent, i


def test_speed_of_a_300_line_file():
    src = (FIXTURES / "07_control_flow.cu").read_text() + (FIXTURES / "04_shared_volatile.cu").read_text()
    big = "\n".join(src.replace("flow", f"flow{k}").replace("block_reduce", f"br{k}").replace(
        "warp_reduce", f"wr{k}") for k in range(7))
    assert len(big.splitlines()) >= 300
    parse(big)
    t = time.perf_counter()
    m = parse(big)
    assert len(m.functions) == 21 and not m.diagnostics
    assert time.perf_counter() - t < 1.0  # generous; bench/ measures the real budget


# -- fuzz -----------------------------------------------------------------------------------
try:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st
except ImportError:  # pragma: no cover
    given = None

if given is not None:
    _CORPUS = [p.read_text() for p in sorted(FIXTURES.glob("*.cu"))]
    _PIECES = ["{", "}", "(", ")", ";", "#if 1\n", "#endif\n", "#define X(", "\"", "'", "/*", "template <",
               "__shfl_sync(", "asm(\"", ":", "::", "<<<", ">>>", "[", "]", "\\\n", "#include \"x.cuh\"\n",
               "__global__", "static_cast<", "&", "->", "0x", "1e", "?", "\n"]

    @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.integers(0, len(_CORPUS) - 1), st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 40),
                                                               st.sampled_from(_PIECES)), max_size=6))
    def test_mutated_inputs_never_crash(idx, edits):
        src = _CORPUS[idx]
        for pos, cut, piece in edits:
            p = pos % (len(src) + 1)
            src = src[:p] + piece + src[p + cut:]
        try:
            m = parse_cuda(src, "fuzz.cu", Options())
        except InputError:
            return
        assert isinstance(m, Module)
        for f in m.functions:
            try:
                CFG(f)
            except InputError:
                pass


def test_member_functions_are_functions_and_constructor_init():
    m = parse("""struct W { __device__ int lane() const { return threadIdx.x & 31; } };
__device__ void f(int x) {}
__device__ int g(int x) { return x; }
__global__ void k(int *a) { half2 v(1.f, 2.f); f(1); g(2); a[0] = g(3); }""")
    assert not m.diagnostics
    lane = fn(m, "W::lane")
    assert (lane.name, lane.params, (lane.loc.line, lane.loc.col)) == ("W__lane", ["this"], (1, 27))
    calls = instrs(fn(m, "k"), "call")
    assert [(c.srcs[0].name, len(c.dests)) for c in calls] == [("__ctor", 1), ("f", 0), ("g", 0), ("g", 1)]


def test_shared_memory_wrapper_and_block_sync():
    m = parse((FIXTURES / "18_shared_wrapper_cg.cu").read_text())
    assert not m.diagnostics
    f = fn(m, "block_sum")
    assert m.state_spaces.get("__smem_DynShared") == "shared"
    ops = [i.opcode for i in instrs(f)]
    assert "st.shared.s32" in ops and "ld.shared.s32" in ops
    assert [i.loc.line for i in instrs(f, "bar")] == [19, 25]
    rank = [i for i in instrs(f, "mov") if i.srcs == (Reg("%tid.x"),) and i.loc.line == 20]
    assert rank


def test_by_value_struct_kernel_parameter_fields_are_param_loads():
    m = parse("""struct P { int n; float *x; };
__global__ void k(P p, int *o) { if (threadIdx.x < p.n) o[threadIdx.x] = p.n; }""")
    f = fn(m, "k")
    lds = [i for i in instrs(f, "ld") if i.opcode.startswith("ld.param")]
    assert lds and lds[0].opcode == "ld.param.s32" and lds[0].srcs == (Addr(Sym("p"), 0),)


def test_cooperative_groups_tiles():
    f = fn(parse((FIXTURES / "19_cg_tiles.cu").read_text()), "tiles")
    sh = instrs(f, "shfl")
    assert [i.opcode for i in sh] == ["shfl.sync.down.b32", "shfl.sync.bfly.b32"]
    assert sh[0].srcs[2:] == (Imm(0x1F), Imm(0xFFFFFFFF))
    assert sh[1].srcs[2] == Imm((16 << 8) | 0x1F) and isinstance(sh[1].srcs[3], Reg)
    ops = [i.opcode for i in instrs(f)]
    assert "vote.sync.ballot.b32" in ops and "vote.sync.any.pred" in ops and "bar.warp.sync" in ops


def test_enumerators_with_unknown_values_are_not_invented():
    f = fn(parse("enum { A = 3, B, C = N * 2, D };\n__global__ void k(int *a) { a[0] = A + B + C + D; }"), "k")
    imms = {s.value for i in instrs(f) for s in i.srcs if isinstance(s, Imm)}
    assert {3, 4} <= imms and 5 not in imms
    loads = [i.srcs[0].base.name for i in instrs(f, "ld")]
    assert loads == ["C", "D"]


def test_a_type_alias_in_the_body_stays_a_type_name_and_errors_point_at_their_token():
    """A name the item itself declares with `using` stays a type name when parsed (it was left out
    of the typedef names, so the error pointed at the alias instead of the real problem)."""
    m = parse("template <typename K> __global__ void k(K *a) {\n  using S = Wrap<K>;\n"
              "  S(a).go(a) @;\n}\n__global__ void good(int *a) { a[0] = 1; }\n")
    assert [f.name for f in m.functions] == ["good"]
    assert "cannot parse '@' at line 3" in m.diagnostics[0].message
    m = parse("template <typename K> __global__ void k(K *a) {\n  using S = Wrap<K>;\n  S(a).go(a);\n}\n")
    assert not m.diagnostics and [i.srcs[0].name for i in instrs(fn(m, "k"), "call")] == ["go"]  # a cast to S
    m = parse("__global__ void good(int *a) { a[0] = 1; }\n__global__ void bad(int *a) { a[0] = @@; }\n")
    assert [f.name for f in m.functions] == ["good"]
    assert "'bad' not analysed" in m.diagnostics[0].message


def test_calls_under_short_circuit_and_ternary_only_run_for_selected_lanes():
    src = """__global__ void k(int *a) {
  int l = threadIdx.x & 31;
  if (l < 16 && __any_sync(0xffff, a[l] > 0)) a[0] = 1;
  a[1] = l < 8 ? __shfl_sync(0xff, l, 0) : 0;
  a[2] = l < 4 ? l : 7;
}"""
    f = fn(parse(src), "k")
    body = f.body
    vote = next(k for k, i in enumerate(body) if isinstance(i, Instr) and i.op == "vote")
    shfl = next(k for k, i in enumerate(body) if isinstance(i, Instr) and i.op == "shfl")
    guarded = [k for k, i in enumerate(body) if isinstance(i, Instr) and i.op == "bra" and i.guard]
    assert any(k < vote for k in guarded) and any(vote < k < shfl for k in guarded)
    assert [i.opcode for i in instrs(f) if i.op == "selp"][-1] == "selp.s32"  # pure arms: selp
    from warplint.pipeline import lint_text
    found = lint_text(src, "k.cu", Options(targets=["sm_70"])).findings
    assert not [x for x in found if x.rule_id in ("WL003", "WL004")]  # masks match the lanes


def test_intrinsics_do_not_import_the_lowering_back():
    """lower -> intrinsics -> ctype, with no cycle back to lower."""
    code = ("import sys, warplint.frontends.cuda.intrinsics; "
            "print('warplint.frontends.cuda.lower' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_bug_in_the_lowering_is_an_internal_error_not_a_note(monkeypatch):
    """A programming error while lowering surfaces; it is not turned into 'not analysed'."""
    from warplint.frontends.cuda.lower import Lowerer

    def broken(self, node):
        raise TypeError("bug")

    monkeypatch.setattr(Lowerer, "stmt", broken)
    with pytest.raises(TypeError):
        parse("__global__ void k(int *a) { a[0] = 1; }\n")


def test_one_table_of_special_registers():
    """Special registers are whole names (a user's asm register `%pmask` or `%tidx` is not one)."""
    from warplint.specials import is_special, special_scope
    assert [special_scope(n) for n in ("%tid.x", "%laneid", "%warpid", "%ctaid.y", "WARP_SZ", "%pm3",
                                       "%envreg5", "%cluster_ctaid.x")] == \
        ["lane", "lane", "warp", "block", "block", "time", "block", "block"]
    assert not any(is_special(n) for n in ("%pmask", "%tidx", "%clocks", "%r1", "tid"))


def test_one_integer_evaluator_divides_exactly():
    """`#if`, constant folding and per-lane arithmetic share warplint.intops: exact truncating
    division (a float quotient was off for values past 2**53), undefined results are None."""
    from warplint.intops import binary
    big = 0x7FFFFFFFFFFFFFFF
    assert binary("div", big, 3) == 3074457345618258602 and binary("div", -7, 2) == -3
    assert binary("rem", -7, 2) == -1 and binary("div", 1, 0) is None and binary("shl", 1, -1) is None
    m = parse(f"#if {big} / 3 == 3074457345618258602\n#define N 4\n#else\n#define N 8\n#endif\n"
              "__global__ void k(int *a) { a[0] = N; }\n")
    assert 4 in {s.value for i in instrs(fn(m, "k")) for s in i.srcs if isinstance(s, Imm)}


def test_inline_asm_renames_its_own_registers_through_the_one_operand_renaming():
    """Registers declared in an asm block get a per-block suffix (guards and addresses too);
    special registers and the statement's operands keep their names."""
    src = """__global__ void k(int *a) {
  int r;
  asm("{ .reg .pred %pl; .reg .u32 %t; mov.u32 %t, %laneid; setp.eq.u32 %pl, %t, 0;\\n"
      "@%pl mov.u32 %0, %t; }" : "=r"(r));
  a[0] = r;
}"""
    f = fn(parse(src), "k")
    movs = [i for i in instrs(f, "mov") if any(isinstance(s, Reg) and s.name == "%laneid" for s in i.srcs)]
    assert movs and movs[0].dests[0].name.startswith("%t") and movs[0].dests[0].name != "%t"
    guarded = [i for i in instrs(f) if i.guard]
    assert guarded and guarded[-1].guard[0].startswith("%pl") and guarded[-1].guard[0] != "%pl"


# -- the C++ layer (cxx.py) ------------------------------------------------------------------
def desugared(src: str) -> str:
    from warplint.frontends.cuda.cxx import desugar
    from warplint.frontends.cuda.preprocess import preprocess
    toks, _ = preprocess(src, "k.cu", {}, [], None)
    return " ".join(t.text for t in desugar(toks, set())[0])


@pytest.mark.parametrize("src, want", [
    ("typedef int I; void f() { x = I(y) + float(z) + I(); }",
     "typedef int I ; void f ( ) { x = ( I ) ( y ) + ( float ) ( z ) + ( I ) ( 0 ) ; }"),
    ("void f() { int a(b); int c{d}; int e{}; T g(h, i); if (a and not c) {} }",
     "void f ( ) { int a = b ; int c = { d } ; int e = 0 ; T g = __ctor ( h , i ) ; if ( a && ! c ) { } }"),
    ("float g(float &x) { return 2 * x; }", "float g ( float x ) { return 2 * x ; }"),
    ('void h(unsigned &v) { asm("mov.u32 %0, 1;" : "=r"(v)); }',
     'void h ( unsigned _Alignas ( 7020 ) v ) { asm ( "mov.u32 %0, 1;" : "=r" ( v ) ) ; }'),
    ("void f(int &o, const int &i, float (&a)[4]) { int &r = o; int &s = a[0]; r = s; }",
     "void f ( int _Alignas ( 7020 ) o , const int i , float ( a ) [ 4 ] ) { ; int * s = & ( a [ 0 ] ) ; "
     "o = ( * s ) ; }"),
    ("namespace d { int l() { return 0; } int m() { return l(); } } int n() { return d::l() + std::max(1, 2); }",
     "namespace d { int d__l ( ) { return 0 ; } int d__m ( ) { return d__l ( ) ; } } "
     "int n ( ) { return d__l ( ) + std :: max ( 1 , 2 ) ; }"),
    ("struct S { int a; S(int x) : a(x) {} int get() const { return a; } static int two() { return 2; } };",
     "struct S { int a ; } ; void S__S ( struct S * this , int x ) { this -> a = x ; } "
     "int S__get ( struct S * this ) { return this -> a ; } static int S__two ( ) { return 2 ; }"),
    ("template <typename T, int N = (2 > 1 and 3)> T f(T x) { return reinterpret_cast<const T &>(x) + N; }",
     "T f ( T x ) { return reinterpret_cast < const T > ( x ) + N ; }"),
    ("P g() { P p; p = {1, 2}; return {p.a, 3}; }",
     "P g ( ) { P p ; p = ( P ) { 1 , 2 } ; return ( P ) { p . a , 3 } ; }"),
    ("void g() { x = c ? T{0.f} : float{y}; z = (P){1}; }",
     "void g ( ) { x = c ? ( T ) { 0.f } : ( float ) { y } ; z = ( P ) { 1 } ; }"),
    ("namespace g = cooperative_groups; void k() { auto t = g::tiled_partition<W>(g::this_thread_block()); }",
     "namespace g = cooperative_groups ; void k ( ) { auto t = tiled_partition ( cooperative_groups :: "
     "this_thread_block ( ) , W ) ; }"),
    ("struct R { template <bool D = true, typename E = X<a and D>> int f() { return 1; } };",
     "struct R { } ; int R__f ( struct R * this ) { return 1 ; }"),
    ("void k(int n) { int s = 0; auto f = [&](int x) { s += x; }; f(n); }",
     "__device__ void k__lambda_1 ( int x , int _Alignas ( 7020 ) s ) { s += x ; } void k ( int n ) { int s = 0 ; ; "
     "k__lambda_1 ( n , s ) ; }"),
    ("static_assert(sizeof(int) == 4, \"int\"); void k() { static_assert(1, \"one\"); }",
     "void k ( ) { __builtin_assume ( 1 ) ; }"),  # a fact in a function body
])
def test_cxx_layer_desugars_to_c_with_the_same_meaning(src, want):
    assert desugared(src) == want


def test_cxx_layer_leaves_what_does_not_parse_and_keeps_locations():
    src = "void f() { x = I(y) @@ ; }\nvoid g() { float v = float(w); }"
    assert "( float ) ( w )" in desugared(src)
    from warplint.frontends.cuda.cxx import desugar
    from warplint.frontends.cuda.preprocess import preprocess
    toks, _ = preprocess("void g() {\n  float v = float(w);\n}", "k.cu", {}, [], None)
    out = desugar(toks, set())[0]
    assert [(t.text, t.line, t.col) for t in out[8:14]] == [
        ("(", 2, 13), ("float", 2, 13), (")", 2, 13), ("(", 2, 13), ("w", 2, 19), (")", 2, 13)]


def test_reference_out_parameter_is_copied_back_to_the_caller():
    m = parse("""__device__ void get(int &x, int y) { x = y + 1; }
__device__ int put(int &x) { x = 2; return 3; }
__global__ void k(int *a) { int v; get(v, 1); a[0] = v; a[1] = put(a[2]); }""")
    assert fn(m, "get").ret_params == ["x"] and fn(m, "put").ret_params == ["x", "$ret"]
    calls = instrs(fn(m, "k"), "call")
    assert [len(c.dests) for c in calls] == [1, 2]


@pytest.mark.parametrize("body, construct", [
    ("for (float x : {1.f, 2.f}) d[0] += x;", "range-for"),  # over a braced list
    ("auto &[x, y] = d; x = 1;", "a structured binding"),  # a reference, written
])
def test_a_construct_the_cxx_layer_leaves_is_named_in_the_note(body, construct):
    m = parse("__global__ void k(float *d) { " + body + " __syncwarp(); }")
    assert not m.functions and f"({construct} is not supported: --via-nvcc analyses it)" in m.diagnostics[0].message


def test_template_arguments_of_a_template_the_cxx_layer_unwrapped_are_dropped():
    """The C++ layer drops `template <...>`; the rewriter still learns the template's name, so
    `red<(512), int>(...)` stays a call (a regression on magma's kernels)."""
    m = parse("""template <int N, typename T> __device__ void red(int tx, T *s) { __syncthreads(); }
#define SEG (512)
__global__ void k(int tx, int *swork) { red<SEG, int>(tx, swork); }""")
    assert not m.diagnostics and [c.srcs[0].name for c in instrs(fn(m, "k"), "call")] == ["red__values_0"]  # N = 512


def test_notes_name_a_function_of_a_namespace_as_written():
    m = parse("namespace a { __device__ int f(int *d) { for (auto x : {1, 2}) {} return __shfl_sync(1u, 1, 0); } }")
    assert m.diagnostics[0].message.startswith("function 'a::f' not analysed")
