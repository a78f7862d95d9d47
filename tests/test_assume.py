"""`__builtin_assume(c)` and `static_assert(c)` in a function body: what `c` says about a value the
same in every lane (`x == k`, `x % k == 0`) is a fact the analysis uses from there on."""
from __future__ import annotations

import pytest

from warplint.options import Options
from warplint.pipeline import lint_file

STRIDED = """
__global__ void sum_pairs(const float *x, float *out, int n)
{{
    {fact}
    for (int i = threadIdx.x % 32; i < n; i += 32) {{
        float v = x[i];
        v += __shfl_xor_sync(0xffffffffu, v, {lanes});
        out[i] = v;
    }}
}}
"""


def _rules(tmp_path, fact: str, lanes: int = 16) -> set[str]:
    src = tmp_path / "k.cu"
    src.write_text(STRIDED.format(fact=fact, lanes=lanes))
    return {f.rule_id for f in lint_file(str(src), Options(targets=["sm_70"])).findings}


def test_assumed_multiple_of_32_keeps_the_lane_strided_loop_whole(tmp_path):
    assert _rules(tmp_path, "__builtin_assume(n % 32 == 0);") == set()


def test_assumed_multiple_of_16_keeps_aligned_halves_together(tmp_path):
    assert _rules(tmp_path, "__builtin_assume(n % 16 == 0);", lanes=1) == set()


@pytest.mark.parametrize("fact", ["", "__builtin_assume(n > 0);", "__builtin_assume(n % 16 == 0);",
                                  "__builtin_assume(n % 32 != 0);"])
def test_weaker_or_no_assumption_leaves_the_last_iteration_partial(tmp_path, fact):
    assert "WL004" in _rules(tmp_path, fact) or "WL005" in _rules(tmp_path, fact)
