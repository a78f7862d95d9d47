"""bench/differential.py without nvcc: sampling, include roots, nvcc failure classes, and how a
finding only one route reports is classed (our own snippets)."""
from __future__ import annotations

import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.join(HERE, "..", "bench")
sys.path.insert(0, BENCH)
SPEC = importlib.util.spec_from_file_location("differential", os.path.join(BENCH, "differential.py"))
diff = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(diff)


def test_sample_is_seeded_and_round_robin_over_repositories():
    by_repo = {"a": [f"a{i}.cu" for i in range(5)], "b": ["b0.cu"], "c": ["c0.cu", "c1.cu"]}
    picked = diff.sample(by_repo, 4, seed=1)
    assert [r for r, _ in picked] == ["a", "b", "c", "a"]
    assert picked == diff.sample(by_repo, 4, seed=1)
    assert len(diff.sample(by_repo, 0, seed=1)) == 8  # 0: every file


def test_include_roots_are_found_by_the_included_path(tmp_path):
    files = {"src/k.cu": '#include <proj/a.h>\n#include "local.h"\n#include <cuda_runtime.h>\n',
             "src/local.h": "", "include/proj/a.h": '#include "proj/b.h"\n', "include/proj/b.h": '#include <dep/x.h>\n',
             "deps/dep/x.h": "", "tests/include/proj/a.h": ""}
    for rel, text in files.items():
        os.makedirs(tmp_path / os.path.dirname(rel), exist_ok=True)
        (tmp_path / rel).write_text(text)
    dirs = diff.include_dirs(str(tmp_path), "src/k.cu")
    assert dirs == [str(tmp_path / "include"), str(tmp_path / "deps")]  # the shortest match; b.h found in it


def test_nvcc_failures_are_classed():
    assert diff.nvcc_reason("nvcc: ATen/ATen.h: No such file or directory") == \
        "missing header: another project's (a dependency)"
    assert diff.nvcc_reason("nvcc: cublas_v2.h: No such file or directory") == \
        "missing header: a CUDA library not installed here"
    assert diff.nvcc_reason('nvcc: identifier "DIM_X" is undefined') == "undefined identifier or type"
    assert diff.nvcc_reason('nvcc: #error "Executor definition missing"') == "#error directive"
    assert diff.nvcc_reason("not analysed: nvcc did not finish within 180s for sm_80") == "nvcc time limit"


def test_a_finding_of_one_route_is_classed_by_what_the_other_did(tmp_path):
    (tmp_path / "k.cu").write_text("__global__ void k(int *p) {\n  p[0] = 1;\n  __syncthreads();\n}\n"
                                   "__device__ int h(int v) {\n  return __shfl_sync(~0u, v, 0);\n}\n")
    result = {"path": "k.cu", "direct": {"findings": [["WL007", "k.cu", 2], ["WL004", "k.cu", 6]], "shown": [["k.cu", 3], ["k.cu", 6]]},
              "via": {"findings": [["WL007", "k.cu", 2], ["WL009", "k.cu", 3]], "shown": [["k.cu", 3]]}}
    c = diff.compare(str(tmp_path), result)
    assert (c["both"], c["direct_only"], c["via_only"], c["agree"]) == (1, 1, 1, False)
    assert (c["fns"], c["fns_agree"]) == (1, 0)  # nvcc compiled k (not h); k's findings differ
    assert dict(c["classes"]) == {"no code from nvcc: WL004 only direct": 1, "both analysed: WL009 only via": 1}
    result["direct"]["shown"] = [["k.cu", 6]]
    assert "not analysed directly: WL009 only via" in diff.compare(str(tmp_path), result)["classes"]


def test_headers_the_build_generates_are_configured_plainly(tmp_path):
    (tmp_path / "config.h.in").write_text("#cmakedefine HAVE_X 1\n#cmakedefine01 USE_Y\n#define V @MAJOR@ + ${nccl:Minor}\n")
    (tmp_path / "kept.h.in").write_text("#define K @K@\n")
    (tmp_path / "kept.h").write_text("#define K 7\n")
    (tmp_path / "Makefile.in").write_text("X = @X@\n")
    diff.configure(str(tmp_path))
    assert (tmp_path / "config.h").read_text() == "/* #undef HAVE_X */\n#define USE_Y 0\n#define V 0 + 0\n"
    assert (tmp_path / "kept.h").read_text() == "#define K 7\n"  # an existing header is left alone
    assert not (tmp_path / "Makefile").exists()  # only headers
