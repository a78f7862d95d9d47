"""CCCL acceptance (issue 12): our own kernels that instantiate CUB's device-wide algorithms
(radix sort, onesweep and classic; merge sort; reduce, scan, select, histogram, segmented reduce)
and block/warp collectives with logical warps of 8 and 16 (tests/cccl_kernels/*.cu), compiled
with -lineinfo for every target nvcc lists.  CUB is correct library code: warplint must report
nothing on it, definite or possible.  Slow (minutes): `pytest -m slow`."""
from __future__ import annotations

import os
import shutil
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from warplint.options import Options
from warplint.pipeline import lint_file

from test_nvcc_corpus import TARGETS

pytestmark = pytest.mark.slow

KERNELS = sorted((Path(__file__).resolve().parent / "cccl_kernels").glob("*.cu"))
NVCC = shutil.which("nvcc")
PLAIN_TARGETS = [t for t in TARGETS if not t.endswith("a")]
if os.environ.get("WARPLINT_CCCL_TARGETS"):  # e.g. "sm_90" while working on a finding
    PLAIN_TARGETS = [t for t in PLAIN_TARGETS if t in os.environ["WARPLINT_CCCL_TARGETS"].split(",")]


@pytest.fixture(scope="session")
def cccl_ptx(tmp_path_factory):
    if not NVCC or not PLAIN_TARGETS:
        pytest.skip("nvcc not available")
    out_dir = tmp_path_factory.mktemp("cccl")

    def compile_one(job):
        kernel, target = job
        out = out_dir / f"{kernel.stem}.{target}.ptx"
        cmd = [NVCC, f"-arch={target}", "-ptx", "-lineinfo", "-o", str(out), str(kernel)]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        if r.returncode != 0:
            return job, None, r.stderr[-2000:]
        return job, out, None

    t0 = time.perf_counter()
    jobs = [(k, t) for k in KERNELS for t in PLAIN_TARGETS]
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(compile_one, jobs))
    print(f"\nCCCL: {len(results)} compilations in {time.perf_counter() - t0:.1f}s")
    return results


def _cases():
    if not PLAIN_TARGETS:
        return [pytest.param("none", marks=pytest.mark.skip(reason="nvcc not available"))]
    return PLAIN_TARGETS


@pytest.mark.parametrize("target", _cases())
def test_cccl_has_no_findings(cccl_ptx, target):
    seen = 0
    for (kernel, t), path, err in cccl_ptx:
        if t != target:
            continue
        assert err is None, f"nvcc failed for {kernel.name} {t}:\n{err}"
        result = lint_file(str(path), Options(targets=[target], use_cache=False))
        assert not result.diagnostics or all(d.severity == "note" for d in result.diagnostics), \
            [str(d) for d in result.diagnostics]
        found = [f"{f.loc.line}: {f.rule_id} {f.message}" for f in result.findings]
        assert not found, f"{kernel.name} on {target}: {len(found)} findings:\n" + "\n".join(found[:20])
        seen += 1
    assert seen == len(KERNELS)
