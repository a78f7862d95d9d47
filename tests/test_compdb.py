"""Compile databases (issue 16): flags per translation unit for both routes, headers borrowing
an includer's flags, and nothing from a database choosing a program or an output."""
from __future__ import annotations

import json
import shutil

import pytest

from warplint import compdb
from warplint.errors import UsageError
from warplint.options import Options


def _db(project, entries):
    project.write("build/compile_commands.json", json.dumps(entries))
    return compdb.load(str(project.root / "build" / "compile_commands.json"))


def test_cmake_entry_gives_includes_defines_std_and_targets(project):
    project.write("src/k.cu", "")
    db = _db(project, [{
        "directory": str(project.root / "build"), "file": "../src/k.cu", "output": "k.o",
        "command": "/usr/local/cuda/bin/nvcc -DNDEBUG -DWIDTH=16 -I../include -isystem /opt/cub -isystem/opt/x "
                   "-O3 -std=c++17 --expt-relaxed-constexpr "
                   "-gencode arch=compute_70,code=sm_70 -gencode=arch=compute_80,code=[sm_80,compute_80] "
                   "-x cu -c ../src/k.cu -o CMakeFiles/k.dir/k.cu.o"}])
    f = db.flags_for(str(project.root / "src" / "k.cu"))
    assert f.include_paths == [str(project.root / "include"), "/opt/cub", "/opt/x"]
    assert f.defines == {"NDEBUG": "1", "WIDTH": "16"}
    assert f.targets == ["sm_70", "sm_80"]
    assert f.nvcc_flags == ["-O3", "-std=c++17", "--expt-relaxed-constexpr"]
    assert db.notes() == [] or "-o" in db.notes()[0]


@pytest.mark.parametrize("args", [
    ["-arch=sm_86"], ["-arch", "sm_86"], ["--gpu-architecture=compute_86"], ["--cuda-gpu-arch=sm_86"],
    ["--generate-code", "arch=compute_86,code=sm_86"]])
def test_target_spellings(project, args):
    project.write("k.cu", "")
    db = _db(project, [{"directory": str(project.root), "file": "k.cu", "arguments": ["nvcc", *args, "k.cu"]},
                       {"directory": str(project.root), "file": "k.cu", "command": "ccache nvcc -arch=sm_90 k.cu"}])
    assert db.flags_for("k.cu").targets == ["sm_86", "sm_90"]  # every entry of the file counts
    assert db.notes() == []


def test_options_naming_programs_files_or_outputs_are_dropped_with_a_note(project):
    project.write("k.cu", "")
    db = _db(project, [{"directory": str(project.root), "file": "k.cu", "arguments": [
        "./evil-nvcc", "-ccbin", "./hostcc/gcc", "--compiler-bindir=./hostcc", "-optf", "opts.txt",
        "--options-file=o2", "-Xcompiler", "-fplugin=./p.so", "-Xcompiler=-B./x", "--keep-dir", "out",
        "-o", "k.o", "--keep", "-Xptxas=-v", "--some-new-option", "k.cu", "other.cu"]}])
    f = db.flags_for("k.cu")
    assert f.nvcc_flags == [] and f.include_paths == [] and f.defines == {}
    note = " ".join(db.notes())
    for opt in ("-ccbin", "--compiler-bindir", "-optf", "--options-file", "-Xcompiler", "--keep-dir", "-o",
                "--keep", "-Xptxas", "--some-new-option", "(input file)"):
        assert f"{opt} (1 entr" in note or (opt == "-Xcompiler" and "-Xcompiler (2 entries)" in note), opt
    assert "evil" not in note and "./hostcc" not in note


def test_header_takes_the_flags_of_a_unit_that_includes_it(project):
    (project.root / ".git").mkdir()
    project.write("src/k.cu", '#include "mid.h"\n')
    project.write("src/mid.h", '#include <util/warp.cuh>\n')
    project.write("include/util/warp.cuh", "")
    project.write("include/lonely.cuh", "")
    db = _db(project, [{"directory": str(project.root), "file": "src/k.cu",
                        "arguments": ["nvcc", "-Iinclude", "-DX=2", "-arch=sm_80", "-c", "src/k.cu"]}])
    f = db.flags_for("include/util/warp.cuh")
    assert f is not None and f.defines == {"X": "2"} and f.targets == ["sm_80"]
    assert f.source == str(project.root / "src" / "k.cu")
    assert db.flags_for("include/lonely.cuh") is None


def test_options_for_a_file(project):
    project.write("k.cu", "")
    db = _db(project, [{"directory": str(project.root), "file": "k.cu",
                        "arguments": ["nvcc", "-DA=1", "-DB=1", "-Iinc", "-arch=sm_80", "-std=c++17", "k.cu"]}])
    o = compdb.options_for("k.cu", Options(defines={"B": "2"}, include_paths=["cli"], compdb=db))
    assert o.defines == {"A": "1", "B": "2"}  # the command line wins
    assert o.include_paths == ["cli", str(project.root / "inc")]
    assert o.targets == ["sm_80"] and o.nvcc_flags == ["-std=c++17"]
    assert compdb.options_for("k.cu", Options(targets=["sm_90"], compdb=db)).targets == ["sm_90"]
    other = Options(compdb=db)
    assert compdb.options_for("nowhere.cu", other) is other


@pytest.mark.parametrize("text, message", [
    ("{", "not a valid compile database"), ("{}", "JSON list"), ('[{"file": 1}]', "entry 1"),
    ('[{"directory": ".", "file": "k.cu"}]', "'arguments'"),
    ('[{"directory": ".", "file": "k.cu", "command": "nvcc \'k.cu"}]', "cannot split")])
def test_bad_database_is_a_usage_error(project, text, message):
    project.write("compile_commands.json", text)
    with pytest.raises(UsageError, match=message):
        compdb.load("compile_commands.json")


def test_cli_direct_route_uses_the_database(project, run_cli):
    (project.root / ".git").mkdir()
    # the define decides whether the branch around the ballot depends on the lane
    project.write("k.cu", "__global__ void k(unsigned *o) {\n  unsigned v = o[threadIdx.x];\n"
                          "  if (threadIdx.x % 32 < LIMIT)\n    v = __shfl_down_sync(0xffffffff, v, 1);\n"
                          "  o[threadIdx.x] = v;\n}\n")
    project.write("build/compile_commands.json", json.dumps([{
        "directory": str(project.root / "build"), "file": "../k.cu",
        "arguments": ["nvcc", "-DLIMIT=16", "-arch=sm_80", "-o", "k.o", "-c", "../k.cu"]}]))
    status, out, err = run_cli("--no-cache", "-p", "build", "--format", "json", "k.cu")
    findings = json.loads(out)["findings"]
    assert status == 1 and findings and all(f["targets"] == ["sm_80"] for f in findings), (out, err)
    assert "-o (1 entry)" in err
    status, out, err = run_cli("--no-cache", "--compile-commands", "missing.json", "k.cu")
    assert status == 2 and "missing.json" in err


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
def test_database_flags_a_shell_would_expand_are_refused_before_nvcc_runs(project, run_cli):
    project.write("k.cu", "__global__ void k(int *p) { p[threadIdx.x] = 1; }\n")
    project.write("build/compile_commands.json", json.dumps([{
        "directory": str(project.root), "file": "k.cu",
        "arguments": ["nvcc", "-DX=$(touch MARKER)", "-c", "k.cu"]}]))
    status, out, err = run_cli("--via-nvcc", "--no-cache", "-p", "build", "k.cu")
    assert status == 2 and "shell would expand" in err and not (project.root / "MARKER").exists()
