"""Names qualified from the global scope (`::f`, `::ns::f`) reach the C++ layer without a scope
node: they must be read (or noted), never crash the front end (found by the mutation fuzz)."""
from warplint.frontends.cuda import parse_cuda
from warplint.options import Options


def test_global_scope_qualified_names_do_not_crash():
    src = """namespace ns { __device__ int g(int x) { return x; } }
__device__ int h(int x) { return x; }
__global__ void k(int *out) {
    out[threadIdx.x] = ::ns::g(1) + ::h(2) + ::S::f;
    __syncwarp();
}
"""
    m = parse_cuda(src, "global_scope.cu", Options())
    assert any(f.name == "k" for f in m.functions)
