// Benchmark input for bench/bench_ptx.py: many CUB block- and warp-level collectives
// instantiated over several key/value types, so that nvcc emits a large PTX module.
#include <cub/cub.cuh>
#include <cstdint>

struct MaxOp {
  template <typename T> __device__ T operator()(const T &a, const T &b) const { return a < b ? b : a; }
};

template <typename K, typename V, int THREADS, int ITEMS>
__global__ void radix_sort_pairs(const K *keys_in, const V *vals_in, K *keys_out, V *vals_out) {
  using Sort = cub::BlockRadixSort<K, THREADS, ITEMS, V>;
  __shared__ typename Sort::TempStorage tmp;
  K keys[ITEMS];
  V vals[ITEMS];
  int base = blockIdx.x * THREADS * ITEMS + threadIdx.x * ITEMS;
  for (int i = 0; i < ITEMS; ++i) {
    keys[i] = keys_in[base + i];
    vals[i] = vals_in[base + i];
  }
  Sort(tmp).Sort(keys, vals);
  for (int i = 0; i < ITEMS; ++i) {
    keys_out[base + i] = keys[i];
    vals_out[base + i] = vals[i];
  }
}

template <typename T, int THREADS, cub::BlockReduceAlgorithm ALG>
__global__ void block_reduce(const T *in, T *out, int n) {
  using Reduce = cub::BlockReduce<T, THREADS, ALG>;
  __shared__ typename Reduce::TempStorage tmp;
  int i = blockIdx.x * THREADS + threadIdx.x;
  T v = i < n ? in[i] : T(0);
  T sum = Reduce(tmp).Sum(v, n - blockIdx.x * THREADS);
  T mx = Reduce(tmp).Reduce(v, MaxOp());
  if (threadIdx.x == 0) {
    out[2 * blockIdx.x] = sum;
    out[2 * blockIdx.x + 1] = mx;
  }
}

template <typename T, int THREADS, cub::BlockScanAlgorithm ALG>
__global__ void block_scan(const T *in, T *out) {
  using Scan = cub::BlockScan<T, THREADS, ALG>;
  __shared__ typename Scan::TempStorage tmp;
  int i = blockIdx.x * THREADS + threadIdx.x;
  T v = in[i], incl, excl, agg;
  Scan(tmp).InclusiveSum(v, incl);
  __syncthreads();
  Scan(tmp).ExclusiveScan(v, excl, T(0), MaxOp(), agg);
  out[i] = incl + excl + agg;
}

template <typename T, int LOGICAL>
__global__ void warp_collectives(const T *in, T *out, int valid) {
  using WR = cub::WarpReduce<T, LOGICAL>;
  using WS = cub::WarpScan<T, LOGICAL>;
  __shared__ typename WR::TempStorage rtmp[256 / LOGICAL];
  __shared__ typename WS::TempStorage stmp[256 / LOGICAL];
  int w = threadIdx.x / LOGICAL;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  T v = in[i];
  T s = WR(rtmp[w]).Sum(v);
  T p = WR(rtmp[w]).Sum(v, valid);
  T incl, excl;
  WS(stmp[w]).InclusiveSum(v, incl);
  WS(stmp[w]).ExclusiveSum(v, excl);
  out[i] = s + p + incl + excl;
}

#define SORT(K, V, T, I) template __global__ void radix_sort_pairs<K, V, T, I>(const K *, const V *, K *, V *);
SORT(int, int, 128, 4)
SORT(unsigned, float, 128, 4)
SORT(float, int, 256, 2)
SORT(int64_t, int, 128, 4)
SORT(uint64_t, double, 64, 4)
SORT(double, int64_t, 128, 2)
SORT(short, int, 128, 8)
SORT(unsigned char, int, 128, 8)

#define RED(T, N) \
  template __global__ void block_reduce<T, N, cub::BLOCK_REDUCE_WARP_REDUCTIONS>(const T *, T *, int); \
  template __global__ void block_reduce<T, N, cub::BLOCK_REDUCE_RAKING>(const T *, T *, int); \
  template __global__ void block_reduce<T, N, cub::BLOCK_REDUCE_RAKING_COMMUTATIVE_ONLY>(const T *, T *, int);
RED(int, 128) RED(float, 256) RED(double, 128) RED(int64_t, 256) RED(unsigned, 96)

#define SCAN(T, N) \
  template __global__ void block_scan<T, N, cub::BLOCK_SCAN_WARP_SCANS>(const T *, T *); \
  template __global__ void block_scan<T, N, cub::BLOCK_SCAN_RAKING>(const T *, T *); \
  template __global__ void block_scan<T, N, cub::BLOCK_SCAN_RAKING_MEMOIZE>(const T *, T *);
SCAN(int, 128) SCAN(float, 256) SCAN(double, 128) SCAN(int64_t, 64) SCAN(unsigned, 160)

#define WARP(T) \
  template __global__ void warp_collectives<T, 32>(const T *, T *, int); \
  template __global__ void warp_collectives<T, 16>(const T *, T *, int); \
  template __global__ void warp_collectives<T, 8>(const T *, T *, int); \
  template __global__ void warp_collectives<T, 4>(const T *, T *, int);
WARP(int) WARP(float) WARP(double) WARP(int64_t) WARP(unsigned)

SORT(int, float, 256, 4)
SORT(unsigned, unsigned, 64, 8)
SORT(int64_t, int64_t, 128, 2)
SORT(float, float, 128, 4)
SORT(unsigned short, unsigned, 256, 4)
SORT(double, double, 64, 4)
RED(short, 128) RED(long long, 64)
SCAN(short, 128) SCAN(long long, 256)
WARP(short) WARP(long long)
SORT(int, int, 128, 16)
SORT(unsigned, double, 128, 8)
SORT(float, unsigned, 64, 16)
SORT(int64_t, float, 256, 8)
SORT(char, short, 128, 16)
SORT(uint64_t, int, 128, 8)
RED(unsigned long long, 128) RED(char, 256)
SCAN(unsigned long long, 128) SCAN(char, 64)
WARP(unsigned long long) WARP(char)
SORT(short, short, 256, 8)
SORT(double, float, 128, 8)
SORT(unsigned char, unsigned char, 256, 16)
SORT(int, double, 64, 8)
WARP(unsigned short)
