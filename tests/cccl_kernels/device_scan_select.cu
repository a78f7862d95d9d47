// CCCL acceptance kernels (issue 12): scan, select, histogram and segmented reduction.
#include <cub/cub.cuh>

struct IsOdd {
  __device__ bool operator()(int v) const { return (v & 1) != 0; }
};

void inclusive_sum(const int *in, int *out, int n, void *tmp, size_t &bytes) {
  cub::DeviceScan::InclusiveSum(tmp, bytes, in, out, n);
}

void exclusive_sum(const float *in, float *out, int n, void *tmp, size_t &bytes) {
  cub::DeviceScan::ExclusiveSum(tmp, bytes, in, out, n);
}

void select_odd(const int *in, int *out, int *count, int n, void *tmp, size_t &bytes) {
  cub::DeviceSelect::If(tmp, bytes, in, out, count, n, IsOdd());
}

void select_unique(const int *in, int *out, int *count, int n, void *tmp, size_t &bytes) {
  cub::DeviceSelect::Unique(tmp, bytes, in, out, count, n);
}

void histogram_even(const float *samples, int *hist, int n, void *tmp, size_t &bytes) {
  cub::DeviceHistogram::HistogramEven(tmp, bytes, samples, hist, 65, 0.0f, 1.0f, n);
}

void segmented_sum(const int *in, int *out, int segments, const int *offsets, void *tmp,
                   size_t &bytes) {
  cub::DeviceSegmentedReduce::Sum(tmp, bytes, in, out, segments, offsets, offsets + 1);
}
