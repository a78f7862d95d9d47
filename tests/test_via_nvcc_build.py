"""The compiler route with a build (issue 16): compile databases, one compilation per target,
findings at the user's call site with library frames, refused options, failures, auto mode.
Each test compiles (seconds on a busy machine): marked slow, skipped where nvcc is absent."""
from __future__ import annotations

import json
import shutil

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")]

# a shuffle under a lane-dependent branch, only where the code is compiled for sm_80 and newer
PER_TARGET = """\
__global__ void k(float *out) {
  float v = out[threadIdx.x];
#if __CUDA_ARCH__ >= 800
  if (threadIdx.x % 32 < 8)
    v = __shfl_down_sync(0xffffffff, v, 1);
#endif
  out[threadIdx.x] = v;
}
"""

LIBRARY_MISUSE = """\
#include <cub/cub.cuh>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void warp_sum(float *out) {
  typedef cub::WarpReduce<float> WR;
  __shared__ typename WR::TempStorage tmp;
  float v = out[threadIdx.x];
  if (threadIdx.x < 16) {
    v = WR(tmp).Sum(v);
  }
  out[threadIdx.x] = v;
}

__global__ void tile_shift(float *out) {
  auto tile = cg::tiled_partition<32>(cg::this_thread_block());
  float v = out[threadIdx.x];
  if (threadIdx.x % 32 < 8) {
    v = tile.shfl_down(v, 1);
  }
  out[threadIdx.x] = v;
}

__global__ void block_sum(float *out) {
  typedef cub::BlockReduce<float, 128> BR;
  __shared__ typename BR::TempStorage tmp;
  float v = out[threadIdx.x];
  if (threadIdx.x % 32 < 16) {
    v = BR(tmp).Sum(v);
  }
  out[threadIdx.x] = v;
}
"""


def _database(project, entries):
    project.write("build/compile_commands.json", json.dumps([
        {"directory": str(project.root / "build"), "file": f"../{name}", "command": command}
        for name, command in entries]))


def test_database_with_two_targets_gives_per_target_findings(project, run_cli, monkeypatch):
    (project.root / ".git").mkdir()
    project.write("k.cu", PER_TARGET)
    _database(project, [("k.cu", "/usr/bin/nvcc -O2 -gencode arch=compute_75,code=sm_75 "
                                 "-gencode arch=compute_80,code=sm_80 -o k.o -c ../k.cu")])
    status, out, err = run_cli("--via-nvcc", "-p", "build", "-j", "2", "--format", "json", "k.cu")
    findings = json.loads(out)["findings"]
    assert status == 1 and findings, err
    assert {f["line"] for f in findings} == {5}
    assert all(f["targets"] == ["sm_80"] for f in findings)
    # unchanged file and headers: the result comes from the cache, nvcc does not run
    import warplint.via_nvcc as via
    monkeypatch.setattr(via.subprocess, "run", lambda *a, **k: pytest.fail("nvcc ran again"))
    again = run_cli("--via-nvcc", "-p", "build", "--format", "json", "k.cu")
    assert json.loads(again[1])["findings"] == findings


def test_library_misuse_reported_at_the_users_line_with_library_frames(project, run_cli):
    (project.root / ".git").mkdir()
    project.write("k.cu", LIBRARY_MISUSE)
    status, out, err = run_cli("--via-nvcc", "--no-cache", "--target", "sm_75", "--format", "json", "k.cu")
    findings = json.loads(out)["findings"]
    assert status == 1, err
    by_line = {f["line"]: f for f in findings}
    assert set(by_line) == {10, 19, 29} and all(f["path"] == "k.cu" for f in findings)
    cub_steps = [s for s in by_line[10]["flow"] if "cub/warp/" in s["path"]]
    assert cub_steps and "WarpReduce" in cub_steps[0]["message"] and "called here" in cub_steps[0]["message"]
    block_steps = [s["message"] for s in by_line[29]["flow"] if "cub/" in s["path"]]
    assert "BlockReduce<...>::Sum, called here" in block_steps[0] and "ReduceStep" in block_steps[-1]
    cg_steps = [s["path"] for s in by_line[19]["flow"]]
    assert any("cooperative_groups" in p for p in cg_steps)


def test_database_never_chooses_the_compiler_or_its_options(project, run_cli):
    (project.root / ".git").mkdir()
    (project.root / "hostcc").mkdir()
    for name in ("gcc", "evil-nvcc"):
        script = project.root / "hostcc" / name
        script.write_text(f'#!/bin/sh\ntouch "{project.root}/MARKER"\nexec /usr/bin/gcc "$@"\n')
        script.chmod(0o755)
    project.write("opts.txt", "-ccbin hostcc/gcc\n")
    project.write("k.cu", "__global__ void k(int *p) { p[threadIdx.x] = 1; }\n")
    _database(project, [("k.cu", "../hostcc/evil-nvcc -ccbin ../hostcc/gcc --compiler-bindir=../hostcc "
                                  "-optf ../opts.txt -Xcompiler -B../hostcc --keep --keep-dir kept -o out.o "
                                  "-c ../k.cu")])
    status, out, err = run_cli("--via-nvcc", "--no-cache", "-p", "build", "k.cu")
    assert status == 0, err
    assert not (project.root / "MARKER").exists()
    assert not (project.root / "build" / "kept").exists() and not (project.root / "build" / "out.o").exists()
    for option in ("-ccbin", "--compiler-bindir", "-optf", "-Xcompiler", "--keep-dir", "-o"):
        assert f"{option} (1 entry)" in err


def test_auto_mode_compiles_only_what_the_direct_route_cannot_analyse(project, run_cli):
    (project.root / ".git").mkdir()
    project.write("plain.cu", PER_TARGET.replace("#if __CUDA_ARCH__ >= 800\n", "").replace("#endif\n", ""))
    project.write("cub.cu", LIBRARY_MISUSE.split("__global__ void tile_shift")[0])  # WarpReduce only
    status, out, err = run_cli("--via-nvcc=auto", "--no-cache", "--target", "sm_80", "--format", "json", ".")
    doc = json.loads(out)
    assert status == 1, err
    assert {(f["path"], f["line"]) for f in doc["findings"]} == {("plain.cu", 4), ("cub.cu", 10)}
    routes = [d for d in doc["diagnostics"] if "--via-nvcc=auto" in d["message"]]
    assert [d["path"] for d in routes] == ["cub.cu"] and "compiled with nvcc" in routes[0]["message"]


def test_compile_error_is_one_diagnostic_and_the_other_files_are_linted(project, run_cli):
    project.write("bad.cu", "\n__global__ void k() { int x = ; }\nint y = ;\n")
    project.write("good.cu", PER_TARGET.replace("#if __CUDA_ARCH__ >= 800\n", "").replace("#endif\n", ""))
    status, out, err = run_cli("--via-nvcc", "--no-cache", "--target", "sm_80", "--format", "json", ".")
    doc = json.loads(out)
    errors = [d for d in doc["diagnostics"] if d["severity"] == "error"]
    assert status == 2
    assert [(d["path"], d["line"]) for d in errors] == [("bad.cu", 2)]
    assert any(f["path"] == "good.cu" for f in doc["findings"])


def test_time_limit_ends_the_compile_with_a_note(project, run_cli):
    project.write("k.cu", LIBRARY_MISUSE)
    status, out, err = run_cli("--via-nvcc", "--no-cache", "--nvcc-timeout", "0.2", "k.cu")
    assert status == 0 and "nvcc did not finish within 0.2s" in err and "note" in err
