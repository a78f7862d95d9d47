"""The same kernel linted as CUDA-C source and through nvcc's PTX (`--via-nvcc`) gives the same
findings at the same .cu lines (columns may differ: nvcc's .loc names the statement)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from warplint.pipeline import lint_file
from warplint.options import Options

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")]

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "cuda"
# legacy intrinsics (__any, __shfl, ...) do not compile for sm_80 at all
LEGACY = ("wl001_",)


def _cases():
    for path in sorted(FIXTURES.glob("*.cu")):
        if not path.name.startswith(LEGACY):
            yield pytest.param(path, id=path.name)


@pytest.mark.parametrize("path", list(_cases()))
def test_same_findings_through_both_routes(path: Path):
    direct = lint_file(str(path), Options(targets=["sm_80"]))
    via = lint_file(str(path), Options(targets=["sm_80"], via_nvcc=True))
    errors = [d for d in via.diagnostics if d.severity == "error"]
    if errors:
        pytest.skip(f"nvcc rejects this fixture for sm_80: {errors[0].message[:120]}")
    a = sorted({(f.rule_id, f.loc.line) for f in direct.findings})
    b = sorted({(f.rule_id, f.loc.line) for f in via.findings})
    assert a == b
    assert all(Path(f.loc.path).name == path.name for f in via.findings)
