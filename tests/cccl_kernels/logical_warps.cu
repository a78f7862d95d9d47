// CCCL acceptance kernels (issue 12): block and warp collectives, with logical warps of 8 and 16.
#include <cub/cub.cuh>

__global__ void block_reduce_scan(const int *in, int *out) {
  using Reduce = cub::BlockReduce<int, 128>;
  using Scan = cub::BlockScan<int, 128>;
  __shared__ typename Reduce::TempStorage reduce_tmp;
  __shared__ typename Scan::TempStorage scan_tmp;
  int v = in[blockIdx.x * 128 + threadIdx.x];
  int total = Reduce(reduce_tmp).Sum(v);
  __syncthreads();
  int prefix;
  Scan(scan_tmp).ExclusiveSum(v, prefix);
  out[blockIdx.x * 128 + threadIdx.x] = prefix + (threadIdx.x == 0 ? total : 0);
}

template <int LOGICAL>
__global__ void logical_warp_reduce(const float *in, float *out) {
  using WarpReduce = cub::WarpReduce<float, LOGICAL>;
  using WarpScan = cub::WarpScan<int, LOGICAL>;
  constexpr int GROUPS = 128 / LOGICAL;
  __shared__ typename WarpReduce::TempStorage reduce_tmp[GROUPS];
  __shared__ typename WarpScan::TempStorage scan_tmp[GROUPS];
  int group = threadIdx.x / LOGICAL;
  float v = in[blockIdx.x * 128 + threadIdx.x];
  float sum = WarpReduce(reduce_tmp[group]).Sum(v);
  int rank;
  WarpScan(scan_tmp[group]).ExclusiveSum(v > 0.0f ? 1 : 0, rank);
  if (threadIdx.x % LOGICAL == 0) out[blockIdx.x * GROUPS + group] = sum + rank;
}

template __global__ void logical_warp_reduce<8>(const float *, float *);
template __global__ void logical_warp_reduce<16>(const float *, float *);
