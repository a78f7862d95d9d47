"""WL007 on paths around a barrier: a race that only a path skipping a barrier produces (a loop
around the barrier that runs no iteration, a uniform branch) is possible, and says so; where
lanes take different sides (a lane-dependent branch), some lanes surely skip it."""
from warplint.options import Options
from warplint.pipeline import lint_text

ZERO_TRIP = """
__global__ void k(const float *score, int *out, int rounds)
{
    __shared__ int best;
    if (threadIdx.x == 0)
        best = 0;
    for (int r = 0; r < rounds; r++) {
        if (threadIdx.x == 0 && score[r] > score[best])
            best = r;
        __syncthreads();
    }
    out[threadIdx.x] = best;
}
"""

DIVERGENT_THEN_UNIFORM = """
__global__ void k(const int *in, int *out, int flag)
{
    __shared__ int first;
    int v = 0;
    if (threadIdx.x == 0)
        first = in[0];
    if (threadIdx.x % 32 < 16)
        __syncwarp(0xffff);
    if (flag)
        v = in[1];
    out[threadIdx.x] = first + v;
}
"""


def _wl007(text):
    result = lint_text(text, "k.cu", Options(targets=["sm_70"]))
    return [f for f in result.findings if f.rule_id == "WL007"]


def test_zero_trip_race_is_possible_and_names_the_barrier():
    [f] = _wl007(ZERO_TRIP)
    assert f.certainty == "possible" and f.loc.line == 12
    assert any("only on a path that skips the barrier at line 10" in d for d in f.details)


def test_lanes_that_skip_a_divergent_barrier_race_definitely():
    # lanes 16-31 never reach the __syncwarp: a later uniform merge does not make it possible
    [f] = _wl007(DIVERGENT_THEN_UNIFORM)
    assert f.certainty == "definite" and f.loc.line == 12
    assert not any("skips the barrier" in d for d in f.details)
