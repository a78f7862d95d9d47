"""The C++ layer (cxx.py): template value arguments per call.  A call of a function template
the file defines, with value arguments written or left to their defaults, calls a copy of the
callee with those value parameters bound to the constants (issues 12 and 13)."""
from __future__ import annotations

from warplint.frontends.cuda.cxx import MAX_TEMPLATE_COPIES, desugar
from warplint.frontends.cuda.preprocess import preprocess


def desugared(src: str):
    toks, _ = preprocess(src, "k.cu", {}, [], None)
    out, facts = desugar(toks, set())
    return " ".join(t.text for t in out), facts


def test_explicit_value_arguments_call_a_copy_with_the_values_bound():
    out, facts = desugared("template <typename T, int W> __device__ T red(T v) { return __shfl_xor_sync(~0u, v, 1, W); }\n"
                           "__global__ void k(float *p) { p[0] = red<float, 24>(p[0]); }")
    assert "__device__ T red__values_0 ( T v ) { return __shfl_xor_sync ( ~ 0u , v , 1 , ( 24 ) ) ; }" in out
    assert "p [ 0 ] = red__values_0 ( p [ 0 ] ) ;" in out
    assert "__device__ T red ( T v ) { return __shfl_xor_sync ( ~ 0u , v , 1 , W ) ; }" in out  # the template stays
    assert facts.display["red__values_0"] == "red (W = 24)" and not facts.notes


def test_a_default_value_binds_when_the_call_leaves_it_out():
    out, facts = desugared("template <bool S = false> __device__ int f(int x) { if constexpr (S) x++; return x; }\n"
                           "__global__ void k(int *p) { p[0] = f(p[0]) + f<true>(1); }")
    assert "int f__values_0 ( int x ) { if constexpr ( ( false ) ) x ++ ; return x ; }" in out
    assert "int f__values_1 ( int x ) { if constexpr ( ( true ) ) x ++ ; return x ; }" in out
    assert "p [ 0 ] = f__values_0 ( p [ 0 ] ) + f__values_1 ( 1 ) ;" in out


def test_one_copy_per_template_and_values():
    out, _ = desugared("template <int N> __device__ int f(int x) { return x + N; }\n"
                       "__global__ void k(int *p) { p[0] = f<2>(p[0]); p[1] = f<2>(p[1]); p[2] = f<3>(p[2]); }")
    assert out.count("int f__values_0 (") == 1 and out.count("int f__values_1 (") == 1
    assert "f__values_2" not in out


def test_a_value_parameter_passed_on_binds_in_the_callee_of_the_copy():
    out, _ = desugared("template <int N> __device__ int g(int x) { return x + N; }\n"
                       "template <int N> __device__ int f(int x) { return g<N * 2>(x); }\n"
                       "__global__ void k(int *p) { p[0] = f<3>(p[0]); }")
    assert "int f__values_0 ( int x ) { return g__values_1 ( x ) ; }" in out
    assert "int g__values_1 ( int x ) { return x + ( ( 3 ) * 2 ) ; }" in out
    assert "int f ( int x ) { return g ( x ) ; }" in out  # the template itself: N unknown


def test_a_default_may_use_an_earlier_value_parameter():
    out, _ = desugared("template <typename T, int N, int M = N * 2> __device__ T f(T x) { return x * M; }\n"
                       "__global__ void k(int *p) { p[0] = f<int, 4>(p[0]); }")
    assert "T f__values_0 ( T x ) { return x * ( ( 4 ) * 2 ) ; }" in out


def test_a_function_in_a_namespace_keeps_its_qualified_name_in_the_copy():
    out, facts = desugared("namespace a { template <bool S = false> __device__ int f(int x) { return S ? x : 0; }\n"
                           "__global__ void k(int *p) { p[0] = a::f<true>(p[0]); } }")
    assert "int a__f__values_0 ( int x ) { return ( true ) ? x : 0 ; }" in out
    assert "p [ 0 ] = a__f__values_0 ( p [ 0 ] ) ;" in out and facts.display["a__f__values_0"] == "a::f (S = true)"


def test_no_copy_without_a_constant_an_overload_or_a_template_without_values():
    out, _ = desugared("template <int N> __device__ int f(int x) { return x + N; }\n"
                       "template <int N> __device__ int g(int x) { return N; }\n"
                       "template <int N> __device__ int g(float x) { return N; }\n"
                       "template <typename T> __device__ T h(T x) { return x; }\n"
                       "__global__ void k(int *p, int n) { p[0] = f<n>(p[0]) + g<1>(2) + h<int>(3) + f(4); }")
    assert "__values_" not in out
    assert "p [ 0 ] = f ( p [ 0 ] ) + g ( 2 ) + h ( 3 ) + f ( 4 ) ;" in out


def test_copies_are_bounded_with_a_note():
    out, facts = desugared("template <int N> __device__ int f(int x) { return N > 0 ? f<N - 1>(x) : x; }\n"
                           "__global__ void k(int *p) { p[0] = f<3>(p[0]); }")
    assert out.count("__values_") == 2 * MAX_TEMPLATE_COPIES  # each copy defined and called once
    last = out.split(f"int f__values_{MAX_TEMPLATE_COPIES - 1} (")[1].split("}")[0]
    assert last.endswith("> 0 ? f ( x ) : x ; ")  # the last copy calls the template
    assert [m for _, m in facts.notes] == [
        f"more than {MAX_TEMPLATE_COPIES} copies of function templates for their value arguments: this call and "
        "later ones use the template with its values unknown"]


def test_a_member_template_stays_erased():
    out, _ = desugared("struct S { int a; template <int N> __device__ int f(int x) { return x + N + a; }\n"
                       "__device__ int g(int x) { return f<2>(x); } };")
    assert "__values_" not in out


def test_a_kernel_launched_with_values_is_a_copy_with_them():
    out, _ = desugared("template <int W> __global__ void k(float *d) { d[0] = __shfl_xor_sync(~0u, d[0], 1, W); }\n"
                       "void launch(float *d) { k<24><<<1, 32>>>(d); }")
    assert "__global__ void k__values_0 ( float * d ) { d [ 0 ] = __shfl_xor_sync ( ~ 0u , d [ 0 ] , 1 , ( 24 ) ) ; }" in out
    assert "k__values_0 << < 1 , 32 >> > ( d ) ;" in out


def test_a_choice_with_a_missing_branch_is_no_choice_and_no_crash():
    """`constexpr int U = c ? : 3;` (a syntax error the parser reads with the branch left out,
    found by bench/fuzz.py): the function gets the parser's note, not an internal error."""
    from warplint.options import Options
    from warplint.pipeline import lint_text
    r = lint_text("template <int H> __global__ void k(float *p) {\n"
                  "    constexpr int U = H % 512 == 0 ?   : 3;\n"
                  "    p[threadIdx.x] = __shfl_sync(0xffffffff, p[0], U);\n}\n", "k.cu", Options())
    messages = [d.message for d in r.diagnostics]
    assert not any("internal error" in m for m in messages)
    assert any("not analysed: cannot parse ':' at line 2" in m for m in messages)
