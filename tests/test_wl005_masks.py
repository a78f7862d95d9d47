"""WL005: the lanes still alive after `if (i >= n) return;` form a prefix of the warp (issue 12,
class 4), and the finding's details say what the membermask is (never a bare "none")."""
from warplint.options import Options
from warplint.pipeline import lint_text


def _wl005(body: str, target: str = "sm_70") -> list:
    src = ("__global__ void k(const float *in, float *out, int n)\n{\n"
           "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n" + body + "}\n")
    res = lint_text(src, "k.cu", Options(targets=[target]))
    return [f for f in res.findings if f.rule_id == "WL005"]


RETURN = "    if (i >= n)\n        return;\n    float v = in[i];\n"


def test_broadcast_from_lane_0_after_a_prefix_return_is_fine():
    for mask in ("0xffffffff", "__activemask()"):
        assert _wl005(RETURN + f"    out[i] = __shfl_sync({mask}, v, 0);\n") == [], mask


def test_reading_the_last_lane_after_a_prefix_return_is_reported():
    for mask in ("0xffffffff", "__activemask()"):
        found = _wl005(RETURN + f"    out[i] = __shfl_sync({mask}, v, 31);\n")
        assert [str(f.message) for f in found] and "lanes 0-30 may read from lane 31" in str(found[0].message)


def test_a_data_dependent_return_leaves_no_prefix():
    body = ("    if (in[i] < 0.0f)\n        return;\n"
            "    out[i] = __shfl_sync(0xffffffff, in[i], 0);\n")
    assert _wl005(body)


def _details(found) -> str:
    return "\n".join(d for f in found for d in f.details)


def test_a_mask_per_lane_is_described():
    body = ("    unsigned group = 0xfu << (threadIdx.x & 28);\n    if (i < n) {\n"
            "        float v = in[i];\n        out[i] = v + __shfl_xor_sync(group, v, 2);\n    }\n")
    found = _wl005(body)
    assert found and "membermask: one per lane: its own group of 4 lanes" in _details(found)


def test_a_shuffle_without_a_membermask_says_so():
    body = ("    float v = in[threadIdx.x];\n    if (threadIdx.x % 32 < 16)\n"
            "        v += __shfl(v, 31);\n    out[threadIdx.x] = v;\n")
    found = _wl005(body, "sm_60")
    assert found and "membermask: none (the shuffle has no membermask)" in _details(found)
