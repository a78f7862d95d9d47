"""Coverage (issue 13): every function with warp primitives is analysed or named in a note; every
run says how many were analysed (text, JSON, SARIF) and --require-analysis gates on it; qualifier
and attribute macros nothing defines do not drop functions."""
from __future__ import annotations

import json

from warplint.frontends.cuda.preprocess import preprocess
from warplint.frontends.cuda.warpcode import warp_functions
from warplint.options import Options
from warplint.pipeline import lint_file

ANALYSED = """\
__global__ void k(float *d) {
  float v = d[threadIdx.x];
  d[threadIdx.x] = __shfl_xor_sync(0xffffffff, v, 1);
}
"""
# host code that calls a barrier: nothing reads it as device code, and no other note names it
HOST_CALLS_BARRIER = "void host_side(int *p) {\n  __syncthreads();\n}\n"


def scan(src, path="k.cu"):
    toks, _ = preprocess(src, path, {}, [])
    return [(f.name, f.loc.line, [(p.name, p.line, p.end_line) for p in f.primitives]) for f in warp_functions(toks, path)]


def test_warp_functions_found_as_written():
    src = """\
namespace a {
template <typename T, int N = 4>
__device__ T f(T v) { return __shfl_xor_sync(0xffffffff, v, 1); }
struct S {
  __device__ int operator()(int x) const { return __ballot_sync(~0u, x); }
  S(int y) : z(y) { }
  int z;
};
int table[] = {1, 2};
__global__ void k(int *p) {
  int v = p[threadIdx.x];
  __syncthreads();
  asm volatile("shfl.sync.bfly.b32 %0, %0, 1, 31, -1;"
               : "+r"(v));
#if 0
  __syncwarp();
#endif
}
__device__ int no_warp_code(int v) { return v + 1; }
}
"""
    assert scan(src) == [("f", 3, [("__shfl_xor_sync", 3, 3)]), ("operator", 5, [("__ballot_sync", 5, 5)]),
                         ("k", 10, [("__syncthreads", 12, 12), ("asm", 13, 14)])]


def test_coverage_line_text_json_sarif(run_cli, project):
    project.write("a.cu", ANALYSED)
    project.write("b.cu", HOST_CALLS_BARRIER)
    status, _, err = run_cli("a.cu", "b.cu")
    assert status == 0
    assert "warp code: 1 of 2 functions analysed; 1 not analysed (notes above)" in err
    assert ("b.cu:1:6: note: function 'host_side' not analysed: its '__syncthreads' at line 2 is not in the "
            "analysis") in err
    _, out, _ = run_cli("--format", "json", "a.cu", "b.cu")
    assert json.loads(out)["coverage"] == {"functions": 2, "analysed": 1, "not_analysed": 1, "failed_files": 0,
                                           "text": "warp code: 1 of 2 functions analysed; 1 not analysed "
                                                   "(notes above)"}
    _, out, _ = run_cli("--format", "sarif", "a.cu", "b.cu")
    assert json.loads(out)["runs"][0]["properties"]["coverage"]["not_analysed"] == 1


def test_require_analysis_gate(run_cli, project):
    project.write("a.cu", ANALYSED)
    project.write("b.cu", HOST_CALLS_BARRIER)
    assert run_cli("--require-analysis", "a.cu")[0] == 0
    status, _, err = run_cli("--require-analysis", "a.cu", "b.cu")
    assert status == 2 and "--require-analysis: 1 of 2 functions with warp primitives not analysed" in err
    project.write("warplint.toml", "require-analysis = true\n")
    assert run_cli("a.cu", "b.cu")[0] == 2
    assert run_cli("a.cu")[0] == 0


def test_coverage_survives_the_result_cache(project):
    p = project.write("b.cu", HOST_CALLS_BARRIER)
    first = lint_file(str(p), Options(use_cache=True))
    again = lint_file(str(p), Options(use_cache=True))
    assert (again.coverage.analysed, again.coverage.total) == (first.coverage.analysed, first.coverage.total) == (0, 1)


def test_file_error_is_counted_as_a_file(run_cli, project):
    project.write("bad.cu", "#if 1\n__global__ void k() { __syncwarp(); }\n")  # unterminated #if
    status, _, err = run_cli("bad.cu")
    assert status == 2 and "warp code: no function with warp primitives found; 1 file not analysed" in err


QUALIFIER_MACRO = """\
#include "lib_macros_not_given.h"
LIB_KERNEL void k(float *d) {
  float v = d[threadIdx.x];
  if (threadIdx.x % 32 < 16) v = __shfl_sync(0xffffffff, v, 0);
  d[threadIdx.x] = v;
}
"""


def test_qualifier_macro_taken_from_its_name(run_cli, project):
    project.write("k.cu", QUALIFIER_MACRO)
    status, out, err = run_cli("--target", "sm_70", "k.cu")
    assert status == 1 and "[WL004]" in out
    assert "k.cu:2:1: note: 'LIB_KERNEL' is defined nowhere warplint read" in err
    assert "taken as __global__ (from its name)" in err and "warp code: 1 of 1 function analysed" in err


def test_qualifier_macro_from_configuration_or_command_line(run_cli, project):
    project.write("k.cu", QUALIFIER_MACRO)
    status, out, err = run_cli("--target", "sm_70", "-DLIB_KERNEL=__global__", "k.cu")
    assert status == 1 and "[WL004]" in out and "LIB_KERNEL' is defined nowhere" not in err
    project.write("warplint.toml", 'macros = {LIB_KERNEL = "__global__"}\n')
    status, out, err = run_cli("--target", "sm_70", "k.cu")
    assert status == 1 and "[WL004]" in out and "LIB_KERNEL' is defined nowhere" not in err


def test_device_qualifier_from_the_body_and_type_names_left_alone(run_cli, project):
    project.write("k.cu", """\
typedef float REAL;
STATIC_FN REAL lane_bcast(REAL v) { return __shfl_sync(0xffffffff, v, 0); }
EXPORT_API REAL host_twice(REAL v) { return 2 * v; }
""")
    status, _, err = run_cli("k.cu")
    assert "'STATIC_FN' is defined nowhere warplint read" in err and "taken as __device__ (the function's body" in err
    assert "REAL" not in err and "EXPORT_API" not in err  # a type name; host code with no device code
    assert "warp code: 1 of 1 function analysed" in err


def test_shared_macro_in_a_body_taken_from_its_name(run_cli, project):
    # `SHARED uint n;` with SHARED from a header not given: __shared__ (with a note), so the kernel
    # is read; a name that does not say SHARED is not taken for it
    project.write("k.cu", """\
#include "lib_macros_not_given.h"
__global__ void k(float *d) {
  LIB_SHARED uint count;
  LIB_SHARED float tile[64];
  if (threadIdx.x == 0) count = 0;
  tile[threadIdx.x % 64] = d[threadIdx.x];
  d[threadIdx.x] = tile[(threadIdx.x + 1) % 64] + count;
}
__global__ void k2(float *d) {
  LIB_CONST float scale = 2;
  d[threadIdx.x] = __shfl_sync(0xffffffff, scale, 0);
}
""")
    status, out, err = run_cli("--target", "sm_70", "k.cu")
    assert "k.cu:3:3: note: 'LIB_SHARED' is defined nowhere warplint read" in err
    assert "taken as __shared__ (from its name)" in err and "[WL007]" in out
    assert "LIB_CONST' is defined nowhere" not in err


def test_group_creation_counts_when_its_function_runs(run_cli, project):
    project.write("k.cu", """\
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__device__ float tile_sum(float v) {
  auto tile = cg::tiled_partition<32>(cg::this_thread_block());
  return v + __shfl_xor_sync(0xffffffff, v, 1);
}
__global__ void k(float *d) { d[threadIdx.x] = tile_sum(d[threadIdx.x]); }
""")
    status, _, err = run_cli("k.cu")
    assert status == 0 and "warp code: 1 of 1 function analysed" in err and "not analysed" not in err
