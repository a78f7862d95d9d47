"""`trap` aborts the whole grid: the threads that take it are neither missing at a later warp
primitive or barrier nor waited for (spec/exit-and-barriers.md; issue 12)."""
from warplint.frontends.cuda import parse_cuda
from warplint.ir import Instr
from warplint.options import Options
from warplint.pipeline import lint_text

CHECKED = ("__global__ void k(const int *status, float *data)\n{\n"
           "    __shared__ float tile[256];\n"
           "    if (status[threadIdx.x] < 0)\n        {ABORT}\n"
           "    tile[threadIdx.x] = data[threadIdx.x];\n    __syncthreads();\n"
           "    data[threadIdx.x] = __shfl_sync(0xffffffff, tile[255 - threadIdx.x], 0);\n}\n")


def _rules(abort: str, target: str) -> list[str]:
    res = lint_text(CHECKED.replace("{ABORT}", abort), "k.cu", Options(targets=[target]))
    return sorted(f.rule_id for f in res.findings)


def test_cuda_trap_intrinsic_lowers_to_ptx_trap():
    m = parse_cuda("__global__ void k(int *d) { if (d[0]) __trap(); }", "k.cu", Options())
    assert any(isinstance(i, Instr) and i.op == "trap" for i in m.functions[0].body)


def test_threads_that_trap_do_not_count():
    for abort in ("__trap();", 'asm volatile("trap;");'):
        for target in ("sm_60", "sm_70"):
            assert _rules(abort, target) == [], (abort, target)


def test_threads_that_return_instead_are_missing():
    assert _rules("return;", "sm_70") == ["WL005"]
    assert "WL002" in _rules("return;", "sm_60")
