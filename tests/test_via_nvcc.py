"""--via-nvcc: nvcc output analysed with findings mapped back to the .cu lines."""
from __future__ import annotations

import shutil

import pytest

from warplint.errors import InputError
from warplint.options import Options
from warplint.via_nvcc import compile_to_ptx_module

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")

SRC = """\
__global__ void k(float *out) {
  float v = out[threadIdx.x];
  if (threadIdx.x % 32 < 16) {
    v += __shfl_xor_sync(0x0000ffff, v, 8);
  }
  unsigned b = __ballot_sync(0xffffffff, v > 0.0f);
  out[threadIdx.x] = v + b;
}
"""


def test_warp_instructions_map_to_cu_lines(tmp_path):
    p = tmp_path / "k.cu"
    p.write_text(SRC)
    m = compile_to_ptx_module(str(p), Options())
    ops = [i for f in m.functions for i in f.body if getattr(i, "op", "") in ("shfl", "vote")]
    shfl = [i for i in ops if i.op == "shfl"]
    vote = [i for i in ops if i.op == "vote"]
    assert shfl and vote
    assert all(i.loc.line == 4 and i.loc.path == str(p) for i in shfl)
    assert all(i.loc.line == 6 and i.loc.path == str(p) for i in vote)
    assert list(tmp_path.iterdir()) == [p]  # nothing left behind


def test_compile_error_is_input_error_with_line(tmp_path):
    p = tmp_path / "bad.cu"
    p.write_text("\n__global__ void k() { int x = ; }\n")
    with pytest.raises(InputError) as e:
        compile_to_ptx_module(str(p), Options())
    assert e.value.loc.line == 2
    assert e.value.loc.path == str(p)


def test_missing_nvcc(tmp_path):
    p = tmp_path / "k.cu"
    p.write_text(SRC)
    with pytest.raises(InputError, match="not found"):
        compile_to_ptx_module(str(p), Options(nvcc="no-such-nvcc-xyz"))
