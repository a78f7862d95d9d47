"""One finding per site and rule: a legacy `__shfl` linted for sm_60 and sm_70 is one finding,
with the highest severity and a message naming both (issue 14)."""
from __future__ import annotations

from warplint.options import Options
from warplint.pipeline import lint_text

LEGACY = """__global__ void k(int *out)
{
    int v = out[threadIdx.x];
    out[threadIdx.x] = __shfl(v, 0);
}
"""


def test_legacy_shuffle_for_two_targets_is_one_finding():
    findings = lint_text(LEGACY, "k.cu", Options(targets=["sm_60", "sm_70"])).findings
    assert len(findings) == 1
    f = findings[0]
    assert f.severity == "error"
    assert f.targets == ("sm_70", "sm_60")
    assert "removed for sm_70+, deprecated for sm_60" in f.message


def test_one_target_keeps_its_own_message():
    findings = lint_text(LEGACY, "k.cu", Options(targets=["sm_60"])).findings
    assert [f.severity for f in findings] == ["warning"]
    assert "deprecated since CUDA 9" in findings[0].message
