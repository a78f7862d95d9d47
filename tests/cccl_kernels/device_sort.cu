// CCCL acceptance kernels (issue 12): device-wide radix sort (onesweep and classic dispatch
// paths are both instantiated) and merge sort.  Our own host wrappers; CUB emits the kernels.
#include <cub/cub.cuh>

void radix_sort_keys(const unsigned *in, unsigned *out, int n, void *tmp, size_t &bytes) {
  cub::DeviceRadixSort::SortKeys(tmp, bytes, in, out, n);
}

void radix_sort_pairs(const int *keys_in, int *keys_out, const float *vals_in, float *vals_out,
                      int n, void *tmp, size_t &bytes) {
  cub::DeviceRadixSort::SortPairs(tmp, bytes, keys_in, keys_out, vals_in, vals_out, n);
}

struct Less {
  __device__ bool operator()(int a, int b) const { return a < b; }
};

void merge_sort_keys(int *keys, int n, void *tmp, size_t &bytes) {
  cub::DeviceMergeSort::SortKeys(tmp, bytes, keys, n, Less());
}
