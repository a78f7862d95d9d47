"""WL009 and exited threads: a barrier that the other threads skip on their way out of the
kernel is released (spec/exit-and-barriers.md); threads that stay alive are reported."""
from warplint.options import Options
from warplint.pipeline import lint_text


def _wl009(body: str, target: str = "sm_70", before: str = "") -> list:
    src = before + "__global__ void k(float *d, volatile int *flag, int n)\n{\n" \
          "    __shared__ float s[256];\n" + body + "}\n"
    res = lint_text(src, "k.cu", Options(targets=[target]))
    return [f for f in res.findings if f.rule_id == "WL009"]


REGION = ("    if (threadIdx.x < 32) {\n        s[threadIdx.x] = d[threadIdx.x];\n"
          "        __syncthreads();\n    }\n")


def test_other_warps_store_and_exit():
    assert _wl009(REGION + "    d[threadIdx.x] = 1.0f;\n") == []


def test_other_warps_reach_another_barrier():
    assert _wl009(REGION + "    __syncthreads();\n    d[threadIdx.x] = s[0];\n")


def test_other_warps_call_an_opaque_function():
    assert _wl009(REGION + "    ext(d);\n", before="__device__ void ext(float *);\n")


def test_other_warps_spin_on_a_flag():
    assert _wl009(REGION + "    while (*flag == 0) {\n    }\n")


def test_split_warp_before_volta_needs_an_immediate_exit():
    loop = ("    for (int i = threadIdx.x; i < n; i += blockDim.x) {\n"
            "        s[threadIdx.x] = d[i];\n        __syncthreads();\n    }\n"
            "    d[threadIdx.x] = 0.0f;\n")
    assert _wl009(loop, "sm_70") == []
    assert _wl009(loop, "sm_60")
