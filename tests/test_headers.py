"""Headers and other extensions (issue 13): device code in .h/.hpp/.inl/... is linted as CUDA-C
when named or found; a plain C/C++ header is quietly "no warp code"; only PTX is read as PTX."""
from __future__ import annotations

import os

import pytest
from conftest import BUGGY_PTX

from warplint.languages import language
from warplint.walk import collect

DEVICE_HEADER = """\
#pragma once
__device__ inline int low_half_bcast(int v) {
  if (threadIdx.x % 32 < 16)
    v = __shfl_sync(0xffffffff, v, 0);
  return v;
}
"""

PLAIN_HEADER = """\
#pragma once
#include <vector>
#include "not_here.h"
MY_API void host_only(std::vector<int>& v) { v.push_back(1); }
"""


@pytest.mark.parametrize("name, text, lang", [
    ("k.h", DEVICE_HEADER, "cuda"), ("k.hpp", DEVICE_HEADER, "cuda"), ("k.inl", DEVICE_HEADER, "cuda"),
    ("k.h", PLAIN_HEADER, None), ("k.cu", PLAIN_HEADER, "cuda"), ("k.ptx", BUGGY_PTX, "ptx"),
    ("k.txt", BUGGY_PTX, "ptx"), ("k.txt", DEVICE_HEADER, "cuda"), ("k.h", BUGGY_PTX, None),
    ("k.h", "// emits .version 7.0 PTX\n#define X 1\n.version 7.0\n", None),
    ("k.h", "// launched with threadIdx.x per row, see kernels.cu\n/* __device__ */ int rows(int n);\n", None),
])
def test_language(name, text, lang):
    assert language(name, text) == lang


def test_named_header_is_cuda_not_ptx(run_cli, project):
    project.write("warp.hpp", DEVICE_HEADER)
    status, out, err = run_cli("--target", "sm_60", "warp.hpp")
    assert status == 1 and "unexpected character" not in err
    assert out.startswith("warp.hpp:4:") and "[WL002]" in out


def test_walk_picks_up_headers_and_plain_headers_are_quiet(run_cli, project):
    project.write("src/warp.cuh", DEVICE_HEADER)
    project.write("src/warp.inl", DEVICE_HEADER)
    project.write("src/plain.h", PLAIN_HEADER)
    project.write("src/notes.txt", DEVICE_HEADER)
    status, out, err = run_cli("--target", "sm_60", "src")
    assert status == 1
    assert sorted({line.split(":")[0] for line in out.splitlines() if "[WL" in line}) == \
        ["src/warp.cuh", "src/warp.inl"]
    assert "plain.h" not in err and "not_here" not in err  # no noise from a plain header
    assert "in 3 files" in err


def test_extensions_configurable(tmp_path):
    for n in ("a.cu", "b.h", "c.cuinl", "d.ptx", "e.hpp"):
        (tmp_path / n).write_text("x")
    files, *_ = collect([str(tmp_path)], root=str(tmp_path), extensions=(".cu", ".cuinl"))
    assert sorted(os.path.basename(f) for f in files) == ["a.cu", "c.cuinl", "d.ptx"]


def test_extensions_config_key(run_cli, project):
    project.write("warplint.toml", 'extensions = [".cu", ".cuinl"]\n')
    project.write("a.cuinl", DEVICE_HEADER)
    project.write("b.h", DEVICE_HEADER)
    status, out, err = run_cli("--target", "sm_60", ".")
    assert status == 1 and "a.cuinl:4:" in out and "b.h" not in out


def test_extensions_config_key_checked(run_cli, project):
    project.write("warplint.toml", 'extensions = ["cu"]\n')
    project.write("a.cu", DEVICE_HEADER)
    status, _, err = run_cli("a.cu")
    assert status == 2 and "'extensions'" in err
