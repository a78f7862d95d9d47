"""Coverage of C++ constructs in the direct route (issue 13): what the C++ layer and the C parser
hand each other, and the notes when a function still cannot be read."""
from __future__ import annotations

from warplint.options import Options
from warplint.pipeline import lint_text


def notes(src, path="k.cu"):
    return [d.message for d in lint_text(src, path, Options()).diagnostics if d.severity == "note"]


def test_internal_parser_failure_names_the_token_and_line():
    # a stray `}` makes pycparser assert inside its scope stack: the note says where, never only
    # "(AssertionError)"
    src = "__global__ void k(int *a) {\n  __syncwarp();\n}\n}\n__global__ void k2(int *a) {\n  __syncwarp();\n}\n"
    found = [m for m in notes(src) if "k2" in m]
    assert found and "'}' at line 4" in found[0] and "closes no '{'" in found[0]
    assert not any("Error)" in m for m in notes(src))


def test_using_namespace_directive_keeps_the_next_function():
    src = ("namespace ns { __device__ int one() { return 1; } }\nusing namespace ns;\n"
           "__global__ void k(int *a) {\n  a[threadIdx.x] = one();\n  __syncwarp();\n}\n")
    result = lint_text(src, "k.cu", Options())
    assert (result.coverage.analysed, result.coverage.total) == (1, 1), notes(src)


def test_inline_asm_with_inputs_only_is_read():
    # `::"r"(x)`: the two colons are one C++ token; the operands after it are the inputs
    src = ('__global__ void k(int *a) {\n  asm volatile("bar.warp.sync %0;" ::"r"(0xffffffffu));\n'
           '  asm volatile("bar.sync %0, %1;" ::"r"(1), "r"(64) : "memory");\n}\n')
    assert not [m for m in notes(src) if "inline asm" in m]
    assert lint_text(src, "k.cu", Options()).coverage.analysed == 1


def test_macros_beside_the_declaration_are_not_qualifiers():
    # a macro alone before `template <...>` is pragma-like (it once became a second __global__
    # and hid the kernel); one inside __launch_bounds__(...) is an argument, not a specifier
    src = ('#include "lib_not_given.h"\nLIB_SUPPRESS_WARNINGS\ntemplate <int B>\n'
           '__global__ __launch_bounds__(LIB_MAX_THREADS, 1) void k(float *d) {\n  __syncwarp();\n}\n')
    said = notes(src)
    assert not [m for m in said if "LIB_SUPPRESS_WARNINGS" in m or "LIB_MAX_THREADS" in m], said
    assert lint_text(src, "k.cu", Options()).coverage.analysed == 1


TILE_OF_MACRO_SIZE = """\
#include <cooperative_groups.h>
#include "lib_not_given.h"
namespace cg = cooperative_groups;
__device__ float tile_sum(cg::thread_block_tile<WARP_SIZE> g, float v) {
  for (int i = 1; i < WARP_SIZE; i <<= 1) v += g.shfl_down(v, i);
  return v;
}
__global__ void k(float *d) {
  cg::thread_block_tile<WARP_SIZE> g = cg::tiled_partition<WARP_SIZE>(cg::this_thread_block());
  float v = d[threadIdx.x];
  if (threadIdx.x % 32 < 16) v = tile_sum(g, v);
  d[threadIdx.x] = v;
}
"""


def test_tile_whose_size_is_an_unread_macro_is_analysed():
    # the size is unknown, so the tile's lanes are too: analysed, and nothing is claimed of them
    result = lint_text(TILE_OF_MACRO_SIZE, "k.cu", Options())
    assert (result.coverage.analysed, result.coverage.total) == (2, 2), notes(TILE_OF_MACRO_SIZE)
    assert not result.findings
    # told the size, the half-tile call is found through the helper's parameter
    told = lint_text(TILE_OF_MACRO_SIZE, "k.cu", Options(defines={"WARP_SIZE": "32"}))
    assert {f.rule_id for f in told.findings} & {"WL002", "WL004"}


def test_host_function_with_warp_code_is_named_host_code():
    # `__lib_inline__` (lower case: not taken for a qualifier macro) marks nothing warplint reads
    src = ('#include <cooperative_groups.h>\n#define __lib_inline__ inline\n'
           '__lib_inline__ void scale(float *d) {\n'
           '  auto t = cooperative_groups::tiled_partition<32>(cooperative_groups::this_thread_block());\n'
           '  d[t.thread_rank()] *= 2.0f;\n}\n')
    said = [m for m in notes(src) if "'scale'" in m]
    assert said and "host code to warplint" in said[0] and "'tiled_partition' at line 4" in said[0], said


def test_class_named_with_its_namespace_is_the_class():
    # `ns::S` of a class defined here in `namespace ns` (nested: `a::ns`, named from inside `a`)
    # is the class's own C name, as a parameter's type and where `ns::S(x, y)` constructs one; it
    # once became a type name `ns__S` that the construction could not follow
    from warplint.frontends.cuda.cxx import desugar
    from warplint.frontends.cuda.preprocess import preprocess
    src = ("namespace a::ns { struct S { int v; __device__ S(int x, int y) : v(x + y) {} }; }\n"
           "namespace a {\n__device__ int get(const ns::S &s) { return s.v; }\n"
           "__global__ void k(int *p) {\n  const auto s = ns::S(1, p[0]);\n"
           "  p[threadIdx.x] = __shfl_sync(0xffffffff, get(s), 0);\n}\n}\n")
    toks, _ = preprocess(src, "k.cu", {}, [], None)
    text = " ".join(t.text for t in desugar(toks, set())[0])
    assert "ns__S" not in text and "const S s" in text and "= S ( 1 , p [ 0 ] )" in text
    result = lint_text(src, "k.cu", Options())
    assert (result.coverage.analysed, result.coverage.total) == (1, 1), notes(src)
    # a class template named with its namespace and arguments: the class (templates are erased)
    tmpl = ("namespace ns { template <typename T> struct C { T v; }; }\n"
            "void f(ns::C<int> c) { g(ns::C<int>(1)); }")
    text = " ".join(t.text for t in desugar(preprocess(tmpl, "k.cu", {}, [], None)[0], set())[0])
    assert text.endswith("void f ( C c ) { g ( C ( 1 ) ) ; }")
    # a class of that name in another namespace is not it: the qualifier stays
    other = "namespace ns { struct S { int v; }; }\nvoid f() { x = other::S(1, 2); y = ns::S(1, 2); }"
    text = " ".join(t.text for t in desugar(preprocess(other, "k.cu", {}, [], None)[0], set())[0])
    assert "x = other :: S ( 1 , 2 ) ; y = S ( 1 , 2 ) ;" in text


def test_conversion_operator_call_is_the_value():
    # `o.operator T()` is o's value converted (the grammar reads no such call); `p->operator T()`
    # is `p[0]`'s; `o.operator()(x)` and `o.operator+(x)` are members of their own, left alone
    from warplint.frontends.cuda.cxx import conversion_calls
    from warplint.frontends.cuda.preprocess import preprocess
    src = ("void f() { a = g(h(v).operator __half(), 1); b = p->operator unsigned int(); "
           "c = o.operator()(x) + o.operator+(y); }")
    text = " ".join(t.text for t in conversion_calls(preprocess(src, "k.cu", {}, [], None)[0]))
    assert "a = g ( h ( v ) , 1 ) ; b = p [ 0 ] ;" in text
    assert "c = o . operator ( ) ( x ) + o . operator + ( y ) ;" in text
    kernel = ("__global__ void k(float *d, const __half *w) {\n"
              "  d[threadIdx.x] = __shfl_sync(0xffffffff, w[0].operator __half(), 0);\n}\n")
    assert lint_text(kernel, "k.cu", Options()).coverage.analysed == 1, notes(kernel)


def test_local_class_with_members_goes_before_its_function():
    # a class a function body defines, with member functions, goes before the function (named
    # after its line: two functions may each define one of that name) with its members; a union
    # declaring a variable leaves the variable
    from warplint.frontends.cuda.cxx import desugar
    from warplint.frontends.cuda.preprocess import preprocess
    src = ("__global__ void k(const int4 *in, float *out) {\n"
           "  union U { int4 a; float s[4]; __device__ U() {} } u;\n"
           "  struct L { unsigned lane; __device__ bool low() const { return lane < 16; } };\n"
           "  L l;\n  l.lane = threadIdx.x % 32;\n  u.a = in[threadIdx.x];\n"
           "  if (l.low()) out[0] = __shfl_sync(0xffffffff, u.s[0], 0);\n}\n"
           "__global__ void k2(float *out) {\n  struct L { int w; __device__ int get() { return w; } };\n"
           "  L l; l.w = 1; out[0] = __shfl_sync(0xffffffff, l.get(), 0);\n}\n")
    text = " ".join(t.text for t in desugar(preprocess(src, "k.cu", {}, [], None)[0], set())[0])
    assert text.startswith("union U__2 { int4 a ; float s [ 4 ] ; } ; __device__ void U__2__U ( union U__2 * this ) "
                           "{ } struct L__3 { unsigned lane ; } ; __device__ bool L__3__low ( struct L__3 * this ) "
                           "{ return this -> lane < 16 ; } __global__ void k")
    assert "U__2 u ; ; L__3 l ;" in text and "if ( L__3__low ( & l ) )" in text
    assert "struct L__10 { int w ; } ; __device__ int L__10__get ( struct L__10 * this )" in text
    result = lint_text(src, "k.cu", Options())
    assert (result.coverage.analysed, result.coverage.total) == (2, 2), notes(src)


def test_macro_statement_from_an_unread_header_is_named():
    # `LOOP(i, n) { ... }` and `BODY` alone: macros no header read defines (a loop's meaning is
    # not guessed); the note says so, never "a template-id" or "syntax error"
    src = ('#include "helpers_not_given.h"\n__global__ void k(float *a, int n) {\n'
           '  GRID_LOOP(i, n) {\n    a[i] = 0;\n  }\n  __syncthreads();\n}\n'
           '__global__ void k2(float *a) {\n  __syncthreads();\n  STEP_BODY\n}\n')
    found = notes(src)
    assert any("'{' at line 3 ('GRID_LOOP(...)' before a block is a macro that no header warplint read "
               "defines: define it (configuration `macros`, -D)" in m for m in found), found
    assert any("'STEP_BODY' alone as a statement is a macro that no header warplint read defines" in m
               for m in found), found
    # defined, the loop is read
    defined = "#define GRID_LOOP(i, n) for (int i = threadIdx.x; i < (n); i += blockDim.x)\n" + src
    assert not any("GRID_LOOP" in m for m in notes(defined))


def test_member_call_on_a_temporary():
    # `S<A>().f(a)`: the member of a class of the file, on a temporary made without values (a
    # compound literal, fields zero); a class not defined here stays an opaque call
    from warplint.frontends.cuda.cxx import desugar
    from warplint.frontends.cuda.preprocess import preprocess
    src = ("template <typename T> struct R { __device__ void run(int t, int *w) { w[t] = t; } };\n"
           "template <typename T> __device__ void d(int *w) {\n"
           "  if (threadIdx.x < 64) R<T>().run(threadIdx.x, w);\n  Other<T>().run(1);\n  __syncwarp();\n}\n")
    text = " ".join(t.text for t in desugar(preprocess(src, "k.cu", {}, [], None)[0], set())[0])
    assert "R__run ( & ( struct R ) { 0 } , threadIdx . x , w ) ;" in text
    assert "Other ( ) . run ( 1 ) ;" in text
    result = lint_text(src, "k.cu", Options())
    assert result.coverage.analysed == result.coverage.total, notes(src)
