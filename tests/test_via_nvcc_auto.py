"""`--via-nvcc=auto` without compiling (issue 16): the direct route's result stands where it
analysed everything, and where nvcc is missing it says so."""
from __future__ import annotations

import json

CLEAN = "__global__ void k(unsigned *o) { o[threadIdx.x] = __ballot_sync(0xffffffff, 1); }\n"
# a CUB warp reduction: its warp code is in toolkit headers the direct route does not read
LIBRARY = """\
#include <cub/cub.cuh>
__global__ void k(float *out) {
  __shared__ cub::WarpReduce<float>::TempStorage tmp;
  out[threadIdx.x] = cub::WarpReduce<float>(tmp).Sum(out[threadIdx.x]);
}
"""


def test_auto_keeps_the_direct_route_and_names_a_missing_nvcc(project, run_cli):
    project.write("clean.cu", CLEAN)
    project.write("library.cu", LIBRARY)
    status, out, err = run_cli("--via-nvcc=auto", "--nvcc", "no-such-nvcc-xyz", "--no-cache", "--format", "json",
                               "clean.cu", "library.cu")
    notes = [(d["path"], d["message"]) for d in json.loads(out)["diagnostics"] if "--via-nvcc=auto" in d["message"]]
    assert notes == [("library.cu", "--via-nvcc=auto: 'no-such-nvcc-xyz' not found on PATH: linted directly only")]
    assert status == 0, err


def test_auto_is_an_option_only_before_the_double_dash(project, run_cli):
    project.write("--via-nvcc=auto", CLEAN)
    status, out, err = run_cli("--no-cache", "--", "--via-nvcc=auto")
    assert status == 0 and "in 1 file" in err  # linted as a file, not taken as the option
