"""nvcc corpus: our own CUB/Thrust-heavy kernels (tests/corpus_kernels/*.cu) compiled with the
installed nvcc for every target it lists, with and without -lineinfo, and once with -G; every PTX
file must parse, every function must get a CFG, and the PTX grammar (ptx.lark) must build the
same IR.  Slow (minutes): `pytest -m slow`."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from warplint.cfg import build_cfg
from warplint.errors import InputError
from warplint.frontends.ptx import parse_ptx

from test_ptx_grammar import assert_same_ir

pytestmark = pytest.mark.slow

KERNELS = sorted((Path(__file__).resolve().parent / "corpus_kernels").glob("*.cu"))
NVCC = shutil.which("nvcc")
VARIANT_BASES = {90, 100, 101, 103, 110, 120, 121}  # arch-specific `a` variants exist from sm_90
G_TARGET = "sm_80"
SLOWEST = "device_reduce.cu"  # Thrust + DeviceReduce: about twice the compile time of the others
_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"', re.M)
_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+\d+(?:.*?inlined_at\s+(\d+)\s+\d+)?", re.M)


def _targets() -> list[str]:
    if not NVCC:
        return []
    try:
        out = subprocess.run([NVCC, "--list-gpu-arch"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    sms = sorted({int(m) for m in re.findall(r"compute_(\d+)", out)})
    names = [f"sm_{n}" for n in sms]
    names += [f"sm_{n}a" for n in sms if n in VARIANT_BASES]
    return names


TARGETS = _targets()


def _jobs():
    """(kernel, target, mode): both modes for plain targets; `a` variants with -lineinfo only
    and not for the slowest kernel (their PTX differs from the plain target's little more than
    in the .target line); -G once per kernel."""
    for k in KERNELS:
        for t in TARGETS:
            if t.endswith("a"):
                modes = () if k.name == SLOWEST else ("lineinfo",)
            else:
                modes = ("plain", "lineinfo")
            for mode in modes:
                yield k, t, mode
        if G_TARGET in TARGETS:
            yield k, G_TARGET, "debug"


@pytest.fixture(scope="session")
def corpus(tmp_path_factory):
    if not NVCC or not TARGETS:
        pytest.skip("nvcc not available")
    out_dir = tmp_path_factory.mktemp("nvcc_corpus")
    flags = {"plain": [], "lineinfo": ["-lineinfo"], "debug": ["-G"]}

    def compile_one(job):
        kernel, target, mode = job
        out = out_dir / f"{kernel.stem}.{target}.{mode}.ptx"
        cmd = [NVCC, f"-arch={target}", "-ptx", *flags[mode], "-o", str(out), str(kernel)]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            unsupported = "nsupported gpu architecture" in r.stderr or "is not defined for option" in r.stderr
            return job, None, ("unsupported" if unsupported else r.stderr[-2000:])
        return job, out, None

    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(compile_one, list(_jobs())))
    print(f"\nnvcc corpus: {len(results)} compilations in {time.perf_counter() - t0:.1f}s")
    return results


def _check_ptx(path: Path, mode: str) -> int:
    text = path.read_text()
    try:
        module = parse_ptx(text, str(path))
        for f in module.functions:
            build_cfg(f)
    except InputError as e:
        lines = text.splitlines()
        context = lines[e.loc.line - 1] if 0 < e.loc.line <= len(lines) else ""
        pytest.fail(f"{e}\n    {context}")
    assert module.functions, f"{path.name}: no functions"
    assert_same_ir(text, str(path))  # the lark grammar (ptx.lark) builds the same IR
    assert module.target and module.ptx_version
    files = {int(n): p for n, p in _FILE.findall(text)}
    locs = _LOC.findall(text)
    if mode == "lineinfo":
        assert locs, f"{path.name}: -lineinfo output without .loc"
        for fileno, line, inlined in locs:
            assert int(fileno) in files, f"{path.name}: .loc file {fileno} has no .file"
            if inlined:
                assert int(inlined) in files, f"{path.name}: inlined_at file {inlined} has no .file"
        mapped = [i for f in module.functions for i in f.body if getattr(i, "raw_loc", None)]
        assert mapped, f"{path.name}: no instruction mapped to a source line"
        assert all(i.loc.path in files.values() for i in mapped)
    if mode == "plain":
        assert not locs
    return sum(len(f.body) for f in module.functions)


def _cases():
    if not TARGETS:
        return [pytest.param("none", marks=pytest.mark.skip(reason="nvcc not available"))]
    return TARGETS + ["debug"]


@pytest.mark.parametrize("target", _cases())
def test_corpus_target(corpus, target):
    checked = 0
    for (kernel, t, mode), path, err in corpus:
        if (mode == "debug") != (target == "debug") or (target != "debug" and t != target):
            continue
        if err == "unsupported":
            continue
        assert err is None, f"nvcc failed for {kernel.name} {t} {mode}:\n{err}"
        _check_ptx(path, mode)
        checked += 1
    if checked == 0:
        pytest.skip(f"nvcc does not accept {target}")


def test_corpus_sizes(corpus):
    ok = [p for _, p, err in corpus if err is None]
    assert len(ok) >= len(KERNELS) * 2
    total_lines = sum(p.read_text().count("\n") for p in ok)
    assert total_lines > 10_000
    if os.environ.get("WARPLINT_CORPUS_STATS"):
        print(f"\nnvcc corpus: {len(ok)} PTX files, {total_lines} lines")
