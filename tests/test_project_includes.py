"""Issue 12/13: project headers included as <proj/x.cuh> or "proj/x.cuh" from a nested file, with
no -I (the build system gives `-I include`): found under a directory above the including file, up
to the linted tree's root, and never outside it.  The header defines a warp-index broadcast; a
kernel branching on it is clean only when the header is read."""
from __future__ import annotations

import pytest

from warplint.frontends.cuda import preprocess as pp_mod
from warplint.options import Options
from warplint.pipeline import lint_file

WARP_HEADER = """#pragma once
namespace proj { namespace ptx {
__device__ __forceinline__ int get_warp_idx() { return __shfl_sync(0xffffffff, threadIdx.x / 32, 0); }
} }
"""
KERNEL = """#pragma once
#include {include}
namespace proj {{
__global__ void k(int *d) {{
    const int warp_idx = ptx::get_warp_idx();
    if (warp_idx == 0)
        d[0] = __shfl_sync(0xffffffff, d[threadIdx.x], 0);
}}
}}
"""


def lint(path, **kw):
    return lint_file(str(path), Options(**kw))


def rules(result) -> list[str]:
    return sorted(f.rule_id for f in result.findings)


def notes(result) -> list[str]:
    return [d.message for d in result.diagnostics if d.severity == "note"]


@pytest.fixture
def tree(tmp_path):
    """A repository (the linted tree) with include/proj/{common,impls}/."""
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    return tmp_path / "repo"


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.mark.parametrize("include", ["<proj/common/warp.cuh>", '"proj/common/warp.cuh"'])
def test_project_header_above_the_file_is_read(tree, include):
    write(tree / "include/proj/common/warp.cuh", WARP_HEADER)
    k = write(tree / "include/proj/impls/kernel.cuh", KERNEL.format(include=include))
    result = lint(k)
    assert rules(result) == [] and notes(result) == []


def test_unread_header_leaves_the_call_opaque(tree):
    """The buggy twin: no such header, so get_warp_idx() is unknown (lane-varying): reported."""
    k = write(tree / "include/proj/impls/kernel.cuh", KERNEL.format(include="<proj/common/warp.cuh>"))
    result = lint(k)
    assert "WL002" in rules(result)
    assert not any("warp.cuh" in n for n in notes(result))  # a <header> found nowhere: no note


def test_angle_include_is_looked_up_in_the_include_paths(tmp_path):
    write(tmp_path / "inc/proj/common/warp.cuh", WARP_HEADER)
    k = write(tmp_path / "src/kernel.cu", KERNEL.format(include="<proj/common/warp.cuh>"))
    assert "WL002" in rules(lint(k))
    assert rules(lint(k, include_paths=[str(tmp_path / "inc")])) == []


def test_header_outside_the_linted_tree_is_never_read(tree, monkeypatch):
    """proj/common/warp.cuh stands above the repository: the search stops at its root."""
    write(tree.parent / "proj/common/warp.cuh", WARP_HEADER)
    write(tree.parent / "include/proj/common/warp.cuh", WARP_HEADER)
    k = write(tree / "include/proj/impls/kernel.cuh", KERNEL.format(include="<proj/common/warp.cuh>"))
    read = []
    real = pp_mod.read_regular
    monkeypatch.setattr(pp_mod, "read_regular", lambda p, *a: read.append(p) or real(p, *a))
    assert "WL002" in rules(lint(k))
    assert read == []


def test_system_headers_are_not_looked_for(tree, monkeypatch):
    """<vector>, <cuda/std/atomic>, <cub/cub.cuh> in the tree are not taken for the system ones."""
    for name in ("vector", "cuda/std/atomic", "cub/cub.cuh", "cuda_fp16.h", "stdio.h"):
        write(tree / "src" / name, "#error not a system header\n")
    k = write(tree / "src/kernel.cu", "#include <vector>\n#include <cuda/std/atomic>\n"
              "#include <cub/cub.cuh>\n#include <cuda_fp16.h>\n#include <stdio.h>\n"
              "__global__ void k(int *d) { d[0] = 1; }\n")
    assert notes(lint(k)) == []


def test_header_appearing_later_invalidates_the_cached_result(tree, monkeypatch, run_cli):
    monkeypatch.chdir(tree)
    k = write(tree / "include/proj/impls/kernel.cuh", KERNEL.format(include="<proj/common/warp.cuh>"))
    assert "WL002" in run_cli(k)[1]
    write(tree / "include/proj/common/warp.cuh", WARP_HEADER)
    assert "WL002" not in run_cli(k)[1]


@pytest.mark.parametrize("include", ['"warp.cuh"', "<proj/warp.cuh>"])
def test_header_in_an_include_folder_above_the_file_is_read(tree, include):
    """nccl's src/device/x.h includes "device.h" from src/include (its build gives -I src/include):
    the include/ folder of each directory above the file is looked in too."""
    header = "warp.cuh" if include.startswith('"') else "proj/warp.cuh"
    write(tree / "src/include" / header, WARP_HEADER)
    k = write(tree / "src/device/kernel.cuh", KERNEL.format(include=include))
    result = lint(k)
    assert rules(result) == [] and notes(result) == []


@pytest.mark.parametrize("include", ['"proj/common/warp.cuh"', "<proj/common/warp.cuh>"])
def test_header_in_a_package_include_tree_is_read(tree, include):
    """DeepEP's csrc/kernels/x.cuh includes <deep_ep/common/exception.cuh> from
    deep_ep/include/deep_ep/common/ (its build gives -I deep_ep/include): for "proj/x.h", the
    proj/include/ folder of each directory above the file is looked in too."""
    write(tree / "proj/include/proj/common/warp.cuh", WARP_HEADER)
    k = write(tree / "csrc/kernels/kernel.cuh", KERNEL.format(include=include))
    result = lint(k)
    assert rules(result) == [] and notes(result) == []


def test_package_include_tree_stays_inside_the_linted_tree(tree):
    """The package folder is looked for only under directories inside the linted tree."""
    write(tree.parent / "proj/include/proj/common/warp.cuh", WARP_HEADER)
    k = write(tree / "csrc/kernel.cuh", KERNEL.format(include="<proj/common/warp.cuh>"))
    assert "WL002" in rules(lint(k))  # not read: get_warp_idx() stays unknown
