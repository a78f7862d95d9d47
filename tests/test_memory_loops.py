"""WL007 between iterations of a loop: an access pending from an earlier iteration is at the
address its terms give now moved by the loop's induction variables (`i++` moves `s[i]` by one
element), so a pair that would meet within one iteration is ruled out where the lanes' offsets
cannot bridge a non-zero multiple of that stride (warplint/analysis/induction.py)."""
from warplint.analysis.memory import _some_nonzero_multiple
from warplint.options import Options
from warplint.pipeline import lint_text

# magma's column sweep: the head of column c (leading dimension ld, a parameter) is read by
# every thread, rewritten by thread 0 after the barrier; the next iteration reads column c + 1
COLUMN_HEADS = """
__global__ void k(float *b, int ld, int ncols, float d)
{
    for (int c = 0; c < ncols; c++) {
        float s = b[c * ld] * d;
        __syncthreads();
        if (threadIdx.x == 0)
            b[c * ld] = s;
    }
}
"""

# the slot moves only in some iterations: an earlier iteration's write may be at this one's slot
SLOT_MOVES_SOMETIMES = """
__global__ void k(const int *keep, int *out, int n)
{
    __shared__ int slot[64];
    int k = 0;
    for (int i = 0; i < n; i++) {
        int v = slot[k];
        if (threadIdx.x == 0)
            slot[k] = v + 1;
        if (keep[i])
            k++;
    }
    out[threadIdx.x] = slot[0];
}
"""


def _wl007(text):
    result = lint_text(text, "k.cu", Options(targets=["sm_70"]))
    return [f for f in result.findings if f.rule_id == "WL007"]


def test_column_moved_by_an_unknown_leading_dimension_is_another_element():
    assert _wl007(COLUMN_HEADS) == []


def test_index_that_moves_only_in_some_iterations_is_no_induction():
    assert 7 in [f.loc.line for f in _wl007(SLOT_MOVES_SOMETIMES)]


def test_nonzero_multiples_strictly_between():
    assert not _some_nonzero_multiple(-4, 4, 4)  # only 0 * 4
    assert _some_nonzero_multiple(0, 8, 4)  # 4
    assert _some_nonzero_multiple(-8, 0, 4)  # -4
    assert not _some_nonzero_multiple(-16, 0, 16)
    assert _some_nonzero_multiple(-3, 3, 1)


def test_an_induction_variable_is_advanced_once_by_a_constant_every_iteration():
    from warplint.analysis.induction import loop_steps
    from warplint.pipeline import analyse, parse_text
    text = """
__global__ void k(int *o, int n)
{
    int k = 0;
    for (int i = 0; i < n; i += 2) {
        if (o[i])
            k++;
        o[i] = k;
    }
}
"""
    options = Options(targets=["sm_70"])
    [fa] = analyse(parse_text(text, "k.cu", options), options)
    assert {reg: step for (_, reg), step in loop_steps(fa.cfg).items()} == {"i": 2}
