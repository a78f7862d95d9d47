"""The C++ layer's types and expressions (issue 13): template-ids, type aliases, parameter packs,
constructions of types not defined here, placement new, `if (init; cond)`; each desugared to C
with the same meaning for the analysis."""
from __future__ import annotations

import pytest

from warplint.frontends.cuda.cxx import desugar
from warplint.frontends.cuda.preprocess import preprocess
from warplint.options import Options
from warplint.pipeline import lint_text


def desugared(src: str) -> str:
    toks, _ = preprocess(src, "k.cu", {}, [], None)
    return " ".join(t.text for t in desugar(toks, set())[0])


@pytest.mark.parametrize("src, want", [
    # a function template called with arguments only a C++ parser reads; a variable template
    ("void f() { x = g<typename C::T, N>(y) + std::is_same_v<A, B>; }",
     "void f ( ) { x = g ( y ) + std :: is_same_v ; }"),
    # a type used in a declaration makes a value: a cast, or an opaque value of several; a name
    # declared nowhere as a type is called (`ns::Y<T>()`: a function template, perhaps)
    ("void f() { X<int> c(p); a = X<int>(q); b = X<int>(q, r); d = ns::Y<T>(); }",
     "void f ( ) { X < int > c = p ; a = ( X ) ( q ) ; b = __ctor ( q , r ) ; d = ns :: Y ( ) ; }"),
    ("void f(ns::Y<T> y) { d = ns::Y<T>(); e = P(1, 2); P p; }",
     "void f ( ns :: Y < T > y ) { d = ( ns__Y ) ( 0 ) ; e = __ctor ( 1 , 2 ) ; P p ; }"),
    # a function called with one argument stays a call; `static_cast<T>` and a tile keep theirs
    ("void f() { a = g<T>(x); b = static_cast<int>(y); c = tiled_partition<32>(t); }",
     "void f ( ) { a = g ( x ) ; b = static_cast < int > ( y ) ; c = tiled_partition < 32 > ( t ) ; }"),
    # braces of a type named with a template-id or a namespace; `T{}` is value-initialised
    ("void f() { a = thrust::plus<float>{}; b = (cfg::mask_t{1} << n); c = P{}; }",
     "void f ( ) { a = ( thrust__plus ) { 0 } ; b = ( ( cfg__mask_t ) { 1 } << n ) ; c = ( P ) { 0 } ; }"),
    # a type applied to braces: a compound literal (marian's `S5 s(A5({a, b}))`)
    ("using A = fn::Array<int, 2>; void f() { S s(A({a, b})); }",
     "typedef fn__Array A ; void f ( ) { S s = ( A ) { a , b } ; }"),
    # braces of a type not known here: an opaque value made of them
    ("void f(float2 *b) { b[i] = {x, y}; b[j] = {z}; }",
     "void f ( float2 * b ) { b [ i ] = __ctor ( x , y ) ; b [ j ] = z ; }"),
    # aliases of qualified types and template-ids
    ("void f() { using R = cub::BlockReduce<typename C::T, 128>; typedef cub::WarpReduce<float> W; "
     "using T = typename C::T; using U = decltype(x); using I = int; }",
     "void f ( ) { typedef cub__BlockReduce R ; typedef cub__WarpReduce W ; typedef C__T T ; "
     "using U = auto ; using I = int ; }"),
    # parameter packs
    ("template <typename... A> void k(int x, A... a, const A &... c) { g(x, a...); n = sizeof...(a); }",
     "void k ( int x , A a , const A c ) { g ( x , a ) ; n = __sizeof_pack_a ; }"),
    # placement new: a store; `new T` (the heap) is left (a note names it)
    ("void f(unsigned *p) { new (&s) unsigned{0}; new (p + 1) P(a, b); new (p) Q; q = new int; }",
     "void f ( unsigned * p ) { ( * ( & s ) = 0 ) ; ( * ( p + 1 ) = __ctor ( a , b ) ) ; ( * ( p ) = 0 ) ; "
     "q = new int ; }"),
    # `if (init; cond)`, `switch (init; cond)`: the init in a block of its own
    ("void f() { if (int k = g(); k > 1) h(k); else h(0); switch (int q = x; q) { case 1: break; } }",
     "void f ( ) { { int k = g ( ) ; if ( k > 1 ) h ( k ) ; else h ( 0 ) ; } "
     "{ int q = x ; switch ( q ) { case 1 : break ; } } }"),
    # a variable named `final` or `override` (the rewriter drops those words as specifiers)
    ("struct A final {}; void g() { int final = 1; final += 2; }",
     "struct A final { } ; void g ( ) { int __final = 1 ; __final += 2 ; }"),
    # a member template named with `template` (a dependent name) or without: erased
    ("void f() { prims.template process<1, 1>(s, 0); p->template g<T>(x); q.h<int>(y); }",
     "void f ( ) { prims . process ( s , 0 ) ; p -> g ( x ) ; q . h ( y ) ; }"),
    # `decltype(e) x = e;`: the type of the value
    ("void f(int y) { decltype(y) x = y; }", "void f ( int y ) { auto x = y ; }"),
])
def test_types_and_expressions_desugar_to_c_with_the_same_meaning(src, want):
    assert desugared(src) == want


def test_a_direct_initialisation_value_is_no_type_name():
    """`int a(b);` reads as a function declaration with a parameter of type `b`: b stays a value."""
    assert desugared("void f() { int a(b); a = b(1); }") == "void f ( ) { int a = b ; a = b ( 1 ) ; }"


def _findings(src: str, target: str = "sm_70"):
    result = lint_text(src, "k.cu", Options(targets=[target]))
    return [d.message for d in result.diagnostics], sorted((f.rule_id, f.loc.line) for f in result.findings)


def test_a_lane_test_in_an_if_initialiser_guards_the_shuffle():
    notes, found = _findings("""__global__ void k(float *d) {
  float v = d[threadIdx.x];
  if (unsigned lane = threadIdx.x % 32; lane < 16)
    v = __shfl_xor_sync(0xffffffff, v, 1);
  d[threadIdx.x] = v;
}""")
    assert not notes and found == [("WL004", 4)]


def test_a_construct_still_left_is_named_in_the_note():
    notes, _ = _findings("__global__ void k(float *d) { float *p = new float[4]; d[0] = __shfl_sync(~0u, p[0], 0); }")
    assert notes and "(new is not supported: --via-nvcc analyses it)" in notes[0]


def test_a_variable_named_final_is_analysed():
    notes, found = _findings("""template <typename DType> __global__ void k(DType *d) {
  DType final;
  final = d[threadIdx.x];
  if (threadIdx.x % 32 < 8)
    final += __shfl_xor_sync(0xffffffff, final, 1);
  d[threadIdx.x] = final;
}""")
    assert not notes and found == [("WL004", 5)]


def test_a_member_template_call_is_analysed():
    """`o.template f<N>(x)` (nccl's prims.template process<1, 1>(...)): a call of a member."""
    notes, found = _findings("""template <typename P> __global__ void k(float *d, P prims) {
  float v = d[threadIdx.x];
  if (prims.template lane_of<32>(threadIdx.x) < 16)
    v += __shfl_xor_sync(0xffffffff, v, 1);
  d[threadIdx.x] = v;
}""")
    assert not notes and found == [("WL004", 4)]
