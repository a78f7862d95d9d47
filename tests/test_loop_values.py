"""The values a loop counter takes at a shuffle (analysis/loop_values.py), which WL005 checks
one by one against the mask: known only where constants decide the loop's trip."""
from __future__ import annotations

import pytest

from warplint.analysis.loop_values import values_at
from warplint.options import Options
from warplint.pipeline import lint_text


def _values(body: str, params: str = "float *d, int n, const int *flag"):
    text = f"__global__ void k({params}) {{\n  float v = d[threadIdx.x];\n{body}\n  d[threadIdx.x] = v;\n}}\n"
    result = lint_text(text, "k.cu", Options(targets=["sm_70"]))
    (fa,) = result.analyses
    (op,) = [op for op in fa.warp_ops if op.kind == "shfl"]
    return values_at(fa.cfg, op.block, op.instr, op.instr.srcs[1])


@pytest.mark.parametrize("loop, expected", [
    ("for (int o = 16; o > 0; o >>= 1)", [16, 8, 4, 2, 1]),
    ("for (int o = 16; o >= 1; o /= 2)", [16, 8, 4, 2, 1]),
    ("for (unsigned o = 1; o < 32; o <<= 1)", [1, 2, 4, 8, 16]),
    ("for (int o = 0; o < 4; ++o)", [0, 1, 2, 3]),
    ("for (int o = 30; o > 0; o -= 10)", [30, 20, 10]),
])
def test_counter_values_in_order(loop, expected):
    assert _values(f"  {loop}\n    v += __shfl_down_sync(0xffffffff, v, o);") == expected


def test_shuffle_under_an_if_in_the_loop_sees_no_value_past_the_exit():
    body = """  for (int o = 16; o > 0; o >>= 1) {
    if (threadIdx.x % 32 < 16)
      v += __shfl_down_sync(0x0000ffff, v, o);
  }"""
    assert _values(body) == [16, 8, 4, 2, 1]


def test_an_operand_computed_from_the_counter():
    body = "  for (int s = 4; s >= 0; --s)\n    v += __shfl_xor_sync(0xffffffff, v, 1 << s);"
    assert _values(body) == [16, 8, 4, 2, 1]


def test_a_break_on_data_may_stop_the_loop_early():
    body = """  for (int o = 16; o > 0; o >>= 1) {
    v += __shfl_down_sync(0xffffffff, v, o);
    if (flag[o]) break;
  }"""
    assert _values(body) == [16, 8, 4, 2, 1]


@pytest.mark.parametrize("body", [
    # a bound the loop does not know
    "  for (int o = 16; o > n; o >>= 1)\n    v += __shfl_down_sync(0xffffffff, v, o);",
    # a start the loop does not know
    "  for (int o = n; o > 0; o >>= 1)\n    v += __shfl_down_sync(0xffffffff, v, o);",
    # also changed on one side of a branch
    "  for (int o = 16; o > 0; o >>= 1) {\n    if (flag[0]) o--;\n"
    "    v += __shfl_down_sync(0xffffffff, v, o);\n  }",
    # more iterations than are followed
    "  for (int o = 0; o < 1000; ++o)\n    v += __shfl_down_sync(0xffffffff, v, o & 31);",
])
def test_unknown_values(body):
    assert _values(body) is None
