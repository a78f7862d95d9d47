// Corpus kernel for tests/test_nvcc_corpus.py: CUB block-level reduce, scan and radix sort.
#include <cub/cub.cuh>

template <typename T, int THREADS>
__global__ void block_sum(const T *in, T *out, int n) {
  using Reduce = cub::BlockReduce<T, THREADS>;
  __shared__ typename Reduce::TempStorage tmp;
  int i = blockIdx.x * THREADS + threadIdx.x;
  T v = i < n ? in[i] : T(0);
  T s = Reduce(tmp).Sum(v, n - int(blockIdx.x) * THREADS);
  if (threadIdx.x == 0) out[blockIdx.x] = s;
}

template <typename T, int THREADS>
__global__ void block_prefix(const T *in, T *out) {
  using Scan = cub::BlockScan<T, THREADS, cub::BLOCK_SCAN_WARP_SCANS>;
  __shared__ typename Scan::TempStorage tmp;
  int i = blockIdx.x * THREADS + threadIdx.x;
  T incl, total;
  Scan(tmp).InclusiveSum(in[i], incl, total);
  out[i] = incl + total;
}

__global__ void block_sort(int *keys, float *vals) {
  using Sort = cub::BlockRadixSort<int, 128, 4, float>;
  __shared__ Sort::TempStorage tmp;
  int k[4];
  float v[4];
  int base = (blockIdx.x * 128 + threadIdx.x) * 4;
  for (int j = 0; j < 4; ++j) { k[j] = keys[base + j]; v[j] = vals[base + j]; }
  Sort(tmp).SortDescending(k, v);
  for (int j = 0; j < 4; ++j) { keys[base + j] = k[j]; vals[base + j] = v[j]; }
}

template __global__ void block_sum<int, 128>(const int *, int *, int);
template __global__ void block_sum<double, 96>(const double *, double *, int);
template __global__ void block_prefix<float, 256>(const float *, float *);
