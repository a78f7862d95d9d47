"""--via-nvcc: nvcc output analysed with findings mapped back to the .cu lines."""
from __future__ import annotations

import os
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


# -- nothing from the linted tree chooses a program to run (issue 10, item 1) ----------------

KERNEL = "__global__ void k(int *p) { p[threadIdx.x] = 1; }\n"


def _plant_host_compiler(root):
    """A 'host compiler' script in the tree that leaves MARKER when anything runs it."""
    (root / "hostcc").mkdir()
    script = root / "hostcc" / "gcc"
    script.write_text(f'#!/bin/sh\ntouch "{root}/MARKER"\nexec gcc "$@"\n')
    script.chmod(0o755)
    return root / "MARKER"


def test_file_named_like_an_option_is_not_an_option(project, run_cli):
    marker = _plant_host_compiler(project.root)
    project.write("k.cu", KERNEL)
    project.write("-optf=opts.cu", KERNEL)  # nvcc would read opts.cu as an options file
    project.write("opts.cu", "-ccbin hostcc/gcc k.cu\n")
    run_cli("--via-nvcc", "--no-cache", ".")
    assert not marker.exists()


def test_shell_characters_in_names_and_defines_are_refused(project, run_cli):
    # nvcc runs its sub-commands through a shell with each argument in double quotes
    project.write("a$(touch MARKER1).cu", KERNEL)
    status, out, err = run_cli("--via-nvcc", "--no-cache", "a$(touch MARKER1).cu")
    assert status == 2 and "shell would expand" in err and not (project.root / "MARKER1").exists()
    project.write("k.cu", KERNEL)
    project.write("warplint.toml", 'defines = { X = "1$(touch MARKER2)" }\n')
    status, out, err = run_cli("--via-nvcc", "--no-cache", "k.cu")
    assert status == 2 and "shell would expand" in err and not (project.root / "MARKER2").exists()


def test_relative_path_entries_are_not_searched(project, monkeypatch):
    fake = project.root / "nvcc"
    fake.write_text(f'#!/bin/sh\ntouch "{project.root}/MARKER"\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", ".:" + os.environ["PATH"])
    project.write("k.cu", KERNEL)
    compile_to_ptx_module("k.cu", Options())  # the real nvcc, not ./nvcc
    assert not (project.root / "MARKER").exists()
