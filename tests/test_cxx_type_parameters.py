"""The C++ layer (cxx.py): type parameters read through classes of the file.  A call that names
or constructs a class for a type parameter binds it in the callee's copy; a type parameter bound
nowhere is read through the one class of the file that has every member it is used with."""
from __future__ import annotations

from test_cxx_template_values import desugared


def test_a_constructed_functor_binds_its_type_parameter_in_the_copy():
    out, facts = desugared("template <typename T> struct Sum { __device__ T operator()(T a, T b) const { return a + b; } };\n"
                           "template <typename T, typename Op> __device__ T red(T v, Op op) { return op(v, v); }\n"
                           "__global__ void k(int *p) { p[0] = red(p[0], Sum<int>{}); }")
    assert "T red__values_0 ( T v , Sum op ) { return Sum__call ( & op , v , v ) ; }" in out
    assert "__device__ T red ( T v , Op op ) { return op ( v , v ) ; }" in out  # the template stays
    assert facts.display["red__values_0"] == "red (Op = Sum)"


def test_a_type_named_as_a_template_argument_binds_too():
    out, _ = desugared("struct Max { __device__ int operator()(int a, int b) const { return a > b ? a : b; } };\n"
                       "template <typename Op> __device__ int red(int v, Op op) { return op(v, v); }\n"
                       "__global__ void k(int *p) { Max m; p[0] = red<Max>(p[0], m); }")
    assert "int red__values_0 ( int v , Max op ) { return Max__call ( & op , v , v ) ; }" in out


def test_static_members_of_an_unbound_type_parameter_come_from_the_one_class_template_with_them():
    out, facts = desugared("template <int W, int S> struct warp_group { __device__ static int size() { return 32 * W; }\n"
                           "  __device__ static int rank() { return (int)threadIdx.x - 32 * S; } };\n"
                           "template <typename G> __device__ int f(int t) { return t < G::size() && G::rank() == 0; }\n")
    assert "return t < ( 32 * G__W ) && ( ( int ) threadIdx . x - 32 * G__S ) == 0 ;" in out
    assert len(facts.notes) == 1 and "'G'" in facts.notes[0][1] and "'warp_group'" in facts.notes[0][1]


def test_two_classes_with_the_members_leave_the_type_parameter_erased():
    out, facts = desugared("template <int W> struct a { __device__ static int size() { return 32 * W; } };\n"
                           "template <int W> struct b { __device__ static int size() { return W; } };\n"
                           "template <typename G> __device__ int f(int t) { return t < G::size(); }\n")
    assert "G__W" not in out and not facts.notes


def test_objects_of_an_unbound_type_parameter_are_of_the_one_class_with_their_members():
    out, facts = desugared("struct layout { int n; float *s; __device__ float *slot(int i) { return s + i; } };\n"
                           "template <typename L> __device__ float f(L *p) { return *p->slot(p->n); }\n")
    assert "__device__ float f ( layout * p ) { return * layout__slot ( p , p -> n ) ; }" in out
    assert "'L'" in facts.notes[0][1] and "class 'layout'" in facts.notes[0][1]


def test_a_member_no_class_has_leaves_the_object_type_erased():
    out, facts = desugared("struct layout { int n; };\n"
                           "template <typename L> __device__ int f(L *p) { return p->n + p->missing; }\n")
    assert "L * p" in out and not facts.notes
