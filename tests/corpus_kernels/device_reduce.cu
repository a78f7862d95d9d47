// Corpus kernel for tests/test_nvcc_corpus.py: device-wide CUB reduction and a Thrust algorithm.
#include <cub/cub.cuh>
#include <thrust/device_ptr.h>
#include <thrust/reduce.h>
#include <thrust/execution_policy.h>

struct AbsMax {
  __device__ float operator()(float a, float b) const { return fabsf(a) < fabsf(b) ? b : a; }
};

void device_sum(const int *in, int *out, int n, void *tmp, size_t bytes) {
  cub::DeviceReduce::Sum(tmp, bytes, in, out, n);
}

void device_absmax(const float *in, float *out, int n, void *tmp, size_t bytes) {
  cub::DeviceReduce::Reduce(tmp, bytes, in, out, n, AbsMax(), 0.0f);
}

int thrust_sum(const int *in, int n) {
  thrust::device_ptr<const int> p(in);
  return thrust::reduce(thrust::device, p, p + n);
}
