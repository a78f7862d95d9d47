"""The C++ layer (cxx.py): lambdas not named by a local, structured bindings, range-for and
class specialisations, each mapped to C with the same meaning for the analysis (issue 13)."""
from __future__ import annotations

import pytest

from warplint.frontends.cuda.cxx import desugar
from warplint.frontends.cuda.frontend import parse_cuda
from warplint.frontends.cuda.preprocess import preprocess
from warplint.options import Options


def desugared(src: str) -> tuple[str, list[str]]:
    toks, _ = preprocess(src, "k.cu", {}, [], None)
    out, facts = desugar(toks, set())
    return " ".join(t.text for t in out), [msg for _, msg in facts.notes]


def parse(src: str):
    return parse_cuda(src, "k.cu", Options())


@pytest.mark.parametrize("src, want", [
    # invoked where it stands: a call of the function, the captures its last arguments
    ("void k(int n) { int s = [&]() { return n + 1; }(); }",
     "__device__ auto k__lambda_1 ( int n ) { return n + 1 ; } void k ( int n ) { int s = k__lambda_1 ( n ) ; }"),
    # an initialised capture is a parameter whose argument is its value
    ("void k(int n) { int s = [t = n * 2]() { return t; }(); }",
     "__device__ auto k__lambda_1 ( auto t ) { return t ; } void k ( int n ) { int s = k__lambda_1 ( n * 2 ) ; }"),
    # a pointer captured by reference and written: the reference mark is a specifier, before `*`
    ("void k(int *p) { auto f = [&]() { p = 0; }; f(); }",
     "__device__ void k__lambda_1 ( int _Alignas ( 7020 ) * p ) { p = 0 ; } void k ( int * p ) { ; "
     "k__lambda_1 ( p ) ; }"),
    # a call that leaves out defaulted arguments gets their defaults before the captures
    ("void k(int n) { int c = 0; auto f = [&](bool last = false, int step = 1) { c += last ? n : step; }; "
     "f(); f(true); f(true, 2); }",
     "__device__ void k__lambda_1 ( bool last = false , int step = 1 , int _Alignas ( 7020 ) c , int n ) "
     "{ c += last ? n : step ; } void k ( int n ) { int c = 0 ; ; k__lambda_1 ( false , 1 , c , n ) ; "
     "k__lambda_1 ( true , 1 , c , n ) ; k__lambda_1 ( true , 2 , c , n ) ; }"),
    # CUDA's execution space on a lambda goes (the grammar does not know it); `[[a]] __device__` stays
    ("void k(int n) { auto f = [=] __device__ (int x) { return x + n; }; n = f(1); }",
     "__device__ auto k__lambda_1 ( int x , int n ) { return x + n ; } void k ( int n ) { ; "
     "n = k__lambda_1 ( 1 , n ) ; }"),
    ("struct S { int a; [[nodiscard]] __device__ int f() { return [&]() { return a; }(); } };",
     "__device__ auto f__lambda_1 ( struct S * this ) { return this -> a ; } struct S { int a ; } ; "
     "[ [ nodiscard ] ] __device__ int S__f ( struct S * this ) { return f__lambda_1 ( this ) ; }"),
])
def test_unnamed_lambdas_are_functions(src, want):
    assert desugared(src)[0] == want


def test_a_lambda_passed_to_a_function_of_the_file_calls_a_copy_of_it():
    """The callee is copied for the lambda: its calls of the parameter call the lambda, with the
    captured variables as the copy's last parameters (`__cap_` names: no clash with its own)."""
    out, notes = desugared("template <typename F> int apply(int x, F f) { return f(x) + x; }\n"
                           "void k(int n, int lane) { n = apply(n, [&](int y) { return y + lane; }); }")
    assert "int apply__k__lambda_2 ( int x , F f , int __cap_lane ) { return k__lambda_2 ( x , __cap_lane ) + x ; }" \
        in out
    assert "n = apply__k__lambda_2 ( n , k__lambda_2 , lane ) ;" in out
    assert "int apply ( int x , F f ) { return f ( x ) + x ; }" in out and not notes


def test_a_lambda_passed_to_a_function_the_file_does_not_define_is_analysed_alone_with_a_note():
    out, notes = desugared("void k(int n) { n = reduce(n, [](int a, int b) { return a + b; }); }")
    assert "n = reduce ( n , k__lambda_1 ) ;" in out
    assert notes == ["lambda at line 1 is analysed as a function of its own (its captures as parameters); "
                     "where it is passed, its calls are opaque"]


@pytest.mark.parametrize("callee", ["", "template <typename F> int apply(int x, F f) { return f(x) + x; }\n"])
def test_a_lambda_in_parentheses_is_the_argument_it_stands_in(callee):
    """`apply(n, ([&](int y) {..}))` (a dispatch macro's argument, written in parentheses) is
    the call's second argument, as without them: it was an internal error."""
    out, notes = desugared(callee + "void k(int n, int lane) { n = apply(n, ([&](int y) { return y + lane; })); }")
    if callee:
        assert "n = apply__k__lambda_2 ( n , ( k__lambda_2 ) , lane ) ;" in out and not notes
    else:
        assert "n = apply ( n , ( k__lambda_1 ) ) ;" in out and len(notes) == 1


def test_lane_index_reaches_a_passed_lambda_through_the_callee_copy():
    m = parse("""template <typename F> __device__ float apply(float x, F f) { return f(x); }
__global__ void k(float *d) {
  unsigned lane = threadIdx.x % 32;
  d[0] = apply(d[1], [&](float y) {
    if (lane < 8) y = __shfl_sync(0xffffffff, y, 0);
    return y; });
}""")
    assert not [d for d in m.diagnostics if "not analysed" in d.message]
    assert {f.name for f in m.functions} >= {"k", "k__lambda_4", "apply__k__lambda_4"}


@pytest.mark.parametrize("src, want", [
    ("void k() { auto const [a, b] = f(x); g(a, b); }",
     "void k ( ) { auto const __binding_1_23 = f ( x ) ; auto const a = __binding_1_23 . __0 ; "
     "auto const b = __binding_1_23 . __1 ; g ( a , b ) ; }"),
    # a const reference: never written, copies mean the same
    ("void k() { const auto &[a, b] = p; g(a); }",
     "void k ( ) { const auto __binding_1_23 = p ; const auto a = __binding_1_23 . __0 ; "
     "const auto b = __binding_1_23 . __1 ; g ( a ) ; }"),
])
def test_structured_bindings_are_parts_of_one_hidden_value(src, want):
    assert desugared(src)[0] == want


def test_braced_returns_give_their_parts_to_a_binding():
    """`return {a, b};` on every path: the result's parts are the values, each evaluated once
    (one atomic), and `auto [x, y] = f()` reads them through the call."""
    m = parse("""
struct P { int a; int b; };
__device__ P f(int *c, int v) { if (v) return {atomicAdd(c, 1), v}; return {0, v}; }
__global__ void k(int *c) { auto [x, y] = f(c, threadIdx.x); c[x] = y; }""")
    f = next(fn for fn in m.functions if fn.name == "f")
    body = [str(i) for i in f.body]
    assert sum("atom" in i for i in body) == 1
    assert sum("$ret.__0" in i for i in body) == 2 and sum("$ret.__1" in i for i in body) == 2
    k = next(fn for fn in m.functions if fn.name == "k")
    copies = [i for i in k.body if getattr(i, "op", None) == "mov" and str(i.srcs[0]).endswith(".__0")]
    assert [str(i.dests[0]).partition(".")[2] for i in copies] == ["__0", ""]  # the binding's part, then x


def test_a_return_without_braces_gives_no_parts():
    m = parse("""
struct P { int a; int b; };
__device__ P f(P p, int v) { if (v) return {1, v}; return p; }""")
    assert not any(".__" in str(i) for i in m.functions[0].body)


@pytest.mark.parametrize("src, want", [
    # an array: as many times as its elements (a constant), no copy of it
    ("void k() { int a[4]; for (int x : a) g(x); }",
     "void k ( ) { int a [ 4 ] ; { for ( int __i_1_22 = 0 ; __i_1_22 < __ctor ( sizeof ( a ) ) ; __i_1_22 ++ ) "
     "{ int x = a [ __i_1_22 ] ; g ( x ) ; } } }"),
    # a written reference: a pointer to the element
    ("void k(W w) { for (auto &s : w) s = 0; }",
     "void k ( W w ) { { for ( int __i_1_15 = 0 ; __i_1_15 < __ctor ( w ) ; __i_1_15 ++ ) "
     "{ auto * s = & ( w [ __i_1_15 ] ) ; ( * s ) = 0 ; } } }"),
    # a range that is computed: evaluated once
    ("void k() { for (const auto &s : make()) g(s); }",
     "void k ( ) { { auto __range_1_12 = make ( ) ; for ( int __i_1_12 = 0 ; __i_1_12 < __ctor ( __range_1_12 ) ; "
     "__i_1_12 ++ ) { const auto s = __range_1_12 [ __i_1_12 ] ; g ( s ) ; } } }"),
])
def test_range_for_is_a_counted_loop_over_the_elements(src, want):
    assert desugared(src)[0] == want


def test_a_written_reference_to_a_computed_range_is_left_with_its_note():
    m = parse("__global__ void k(int *d) { for (auto &s : make()) s = 0; __syncwarp(); }")
    assert not m.functions and "(range-for is not supported" in m.diagnostics[0].message


def test_a_failure_inside_a_mapped_lambda_does_not_blame_the_lambda():
    """The hoisted function keeps the lambda's locations; a parse error in it names what fails,
    not "a lambda not named by a local"."""
    m = parse("__global__ void k(int *d) { d[0] = [&]() { if (d[1]) throw 1; return 2; }(); __syncwarp(); }")
    assert "(throw is not supported" in m.diagnostics[0].message


@pytest.mark.parametrize("src, name, shown", [
    ("template <> struct R<2> { static __device__ int run(int x) { return __shfl_xor_sync(~0u, x, 1); } };",
     "R__1__run", "R<2>::run"),
    ("template <typename T> struct W<T, 3> { T a; __device__ void run(T *d) { d[0] = __shfl_sync(~0u, a, 0); } };",
     "W__1__run", "W<T,3>::run"),
])
def test_class_specialisations_are_classes_of_their_own(src, name, shown):
    m = parse(src)
    assert [f.name for f in m.functions] == [name] and m.functions[0].display_name == shown


def test_a_call_through_an_explicit_specialisation_calls_its_member():
    out, _ = desugared("template <int N> struct T { static int f(int x) { return T<N / 2>::f(x); } };\n"
                       "template <> struct T<1> { static int f(int x) { return x; } };\n"
                       "int k(int x) { return T<1>::f(x) + T<4>::f(x); }")
    assert "int k ( int x ) { return T__2__f ( x ) + T__f ( x ) ; }" in out


def test_cuda_alignment_specifier_goes_before_the_grammar_reads_it():
    out, _ = desugared("struct S { int a; __device__ void f() { extern __shared__ __align__(16) float s[]; s[0] = a; } };")
    assert "extern __shared__ float s [ ] ;" in out and "S__f ( struct S * this )" in out


def test_a_lambda_in_a_callee_copied_for_another_lambda_is_defined_once():
    """`outer` is copied for the kernel's lambda; the lambda inside it (passed on to `apply`) and
    apply's copy for it are not defined a second time by that copy."""
    m = parse("""template <typename F> __device__ int apply(int x, F f) { return f(x); }
template <typename G> __device__ int outer(int x, G g) { return apply(x, [&](int y) { return g(y) + x; }); }
__global__ void k(int *d) { d[0] = outer(d[1], [&](int z) { return __shfl_sync(0xffffffff, z, 0); }); }""")
    names = [f.name for f in m.functions]
    assert not [d for d in m.diagnostics if "not analysed" in d.message] and len(names) == len(set(names))
    assert "outer__k__lambda_3" in names and names.count("outer__lambda_2") == 1


def test_a_struct_reference_gets_back_the_fields_the_callee_writes():
    m = parse("""
struct S { int a; int b; };
__device__ void set(S &s) { s.a = threadIdx.x; }
__global__ void k(int *p) { S s; set(s); p[s.a] = 0; }""")
    k = next(fn for fn in m.functions if fn.name == "k")
    moves = [str(i.dests[0]) for i in k.body if getattr(i, "op", None) == "mov"]
    assert "s.a" in moves and "s.b" not in moves
