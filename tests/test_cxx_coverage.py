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
