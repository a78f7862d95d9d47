// Corpus kernel for tests/test_nvcc_corpus.py: CUB warp reduce/scan, warp intrinsics, inline PTX.
#include <cub/cub.cuh>

__device__ __forceinline__ unsigned lane_id() {
  unsigned r;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(r));
  return r;
}

__device__ __forceinline__ int ballot_count(bool p) {
  int n;
  asm("{\n\t.reg .pred q;\n\t.reg .b32 m;\n\tsetp.ne.u32 q, %1, 0;\n\tvote.sync.ballot.b32 m, q, 0xffffffff;\n\tpopc.b32 %0, m;\n\t}"
      : "=r"(n) : "r"((unsigned)p));
  return n;
}

template <typename T, int LOGICAL>
__global__ void warp_ops(const T *in, T *out, int valid) {
  using WR = cub::WarpReduce<T, LOGICAL>;
  using WS = cub::WarpScan<T, LOGICAL>;
  __shared__ typename WR::TempStorage rt[128 / LOGICAL];
  __shared__ typename WS::TempStorage st[128 / LOGICAL];
  int w = threadIdx.x / LOGICAL;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  T v = in[i];
  T s = WR(rt[w]).Sum(v, valid);
  T e;
  WS(st[w]).ExclusiveSum(v, e);
  out[i] = s + e;
}

__global__ void intrinsics(int *out) {
  unsigned lane = lane_id();
  int v = out[threadIdx.x];
  unsigned m = __ballot_sync(0xffffffffu, v > 0);
  if (lane < 16) {
    v += __shfl_xor_sync(0x0000ffffu, v, 8, 16);
  }
  v += __shfl_down_sync(0xffffffffu, v, 1);
#if __CUDA_ARCH__ >= 700
  v += __match_any_sync(0xffffffffu, v);
#endif
#if __CUDA_ARCH__ >= 800
  v += __reduce_add_sync(0xffffffffu, v);
#endif
  __syncwarp();
  out[threadIdx.x] = v + __popc(m) + ballot_count(v & 1) + __activemask();
}

template __global__ void warp_ops<int, 32>(const int *, int *, int);
template __global__ void warp_ops<float, 8>(const float *, float *, int);
template __global__ void warp_ops<long long, 16>(const long long *, long long *, int);
