// Ground truth for warplint's Volta+ rules: each kernel is one rule's bad or good case.
// Run every kernel under compute-sanitizer synccheck/racecheck (see run.sh).
#include <cstdio>
#include <cstring>

__global__ void if_else_xor(float *out) {  // WL002 on sm_6x only; clean on sm_70+
  unsigned tid = threadIdx.x;
  float v = out[tid];
  if (tid % 32 < 16) { v *= 2.0f; v += __shfl_xor_sync(0xffffffff, v, 16); }
  else { v *= 3.0f; v -= __shfl_xor_sync(0xffffffff, v, 16); }
  out[tid] = v;
}

__global__ void half_full_mask(float *out) {  // WL004 definite
  float v = out[threadIdx.x];
  if (threadIdx.x % 32 < 16) v += __shfl_xor_sync(0xffffffff, v, 8);
  out[threadIdx.x] = v;
}

__global__ void strided_loop_full_mask(float *out, int n) {  // WL004 possible (n % 32 != 0)
  float acc = 0.0f;
  for (int i = threadIdx.x % 32; i < n; i += 32) {
    float v = out[i];
    acc += __shfl_down_sync(0xffffffff, v, 1);
  }
  out[threadIdx.x] = acc;
}

__global__ void exit_then_full_mask(float *out) {  // WL004 clean (exited lanes); WL005 definite
  unsigned lane = threadIdx.x % 32;
  if (lane >= 16) return;
  float v = out[threadIdx.x];
  v += __shfl_xor_sync(0xffffffff, v, 16);
  out[threadIdx.x] = v;
}

__global__ void syncwarp_half_full_mask(float *out) {  // WL004 definite (bar.warp.sync)
  float v = out[threadIdx.x];
  if (threadIdx.x % 32 < 16) { __syncwarp(0xffffffff); v += 1.0f; }
  out[threadIdx.x] = v;
}

__global__ void syncwarp_not_in_mask(float *out) {  // WL003 definite (bar.warp.sync)
  float v = out[threadIdx.x];
  __syncwarp(0x0000ffff);
  out[threadIdx.x] = v + 1.0f;
}

__global__ void lane_not_in_mask(float *out) {  // WL003 definite
  float v = out[threadIdx.x];
  v += __shfl_sync(0x0000ffff, v, 0);
  out[threadIdx.x] = v;
}

__global__ void unrolled_volatile(float *out) {  // WL007
  __shared__ volatile float s[64];
  unsigned tid = threadIdx.x;
  s[tid] = out[tid];
  s[tid + 32] = 0.0f;
  if (tid < 32) {
    s[tid] += s[tid + 16];
    s[tid] += s[tid + 8];
    s[tid] += s[tid + 4];
    s[tid] += s[tid + 2];
    s[tid] += s[tid + 1];
  }
  if (tid == 0) out[0] = s[0];
}

__global__ void butterfly_syncwarp(float *out) {  // WL007 clean
  __shared__ float s[32];
  unsigned tid = threadIdx.x;
  s[tid] = out[tid];
  __syncwarp();
  float t;
  t = s[tid ^ 16]; __syncwarp(); s[tid] += t; __syncwarp();
  t = s[tid ^ 8];  __syncwarp(); s[tid] += t; __syncwarp();
  t = s[tid ^ 4];  __syncwarp(); s[tid] += t; __syncwarp();
  if (tid == 0) out[0] = s[0];
}

__global__ void barrier_in_half_warp(float *out) {  // WL009 definite
  __shared__ float s[64];
  s[threadIdx.x] = out[threadIdx.x];
  if (threadIdx.x % 32 < 16) __syncthreads();
  out[threadIdx.x] = s[63 - threadIdx.x];
}

__global__ void barrier_after_return(float *out, int n) {  // WL009 clean on sm_70+
  __shared__ float s[64];
  if (threadIdx.x >= n) return;
  s[threadIdx.x] = out[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = s[n - 1 - threadIdx.x];
}

__global__ void activemask_loop(unsigned *out, const float *data, int n) {  // WL008 possible
  unsigned lane = threadIdx.x % 32;
  for (int i = lane; i < n; i += 32) {
    unsigned active = __activemask();
    unsigned bits = __ballot_sync(active, data[i] > 0.5f);
    if (lane == 0) out[i / 32] = bits;
  }
}

int main(int argc, char **argv) {
  const char *k = argc > 1 ? argv[1] : "";
  float *f; unsigned *u;
  cudaMalloc(&f, 1024 * sizeof(float));
  cudaMalloc(&u, 1024 * sizeof(unsigned));
  cudaMemset(f, 0, 1024 * sizeof(float));
  if (!strcmp(k, "if_else_xor")) if_else_xor<<<1, 64>>>(f);
  else if (!strcmp(k, "half_full_mask")) half_full_mask<<<1, 32>>>(f);
  else if (!strcmp(k, "strided_loop_full_mask")) strided_loop_full_mask<<<1, 32>>>(f, 40);
  else if (!strcmp(k, "exit_then_full_mask")) exit_then_full_mask<<<1, 32>>>(f);
  else if (!strcmp(k, "syncwarp_half_full_mask")) syncwarp_half_full_mask<<<1, 32>>>(f);
  else if (!strcmp(k, "syncwarp_not_in_mask")) syncwarp_not_in_mask<<<1, 32>>>(f);
  else if (!strcmp(k, "lane_not_in_mask")) lane_not_in_mask<<<1, 32>>>(f);
  else if (!strcmp(k, "unrolled_volatile")) unrolled_volatile<<<1, 32>>>(f);
  else if (!strcmp(k, "butterfly_syncwarp")) butterfly_syncwarp<<<1, 32>>>(f);
  else if (!strcmp(k, "barrier_in_half_warp")) barrier_in_half_warp<<<1, 64>>>(f);
  else if (!strcmp(k, "barrier_after_return")) barrier_after_return<<<1, 64>>>(f, 40);
  else if (!strcmp(k, "activemask_loop")) activemask_loop<<<1, 32>>>(u, f, 40);
  else { printf("unknown kernel %s\n", k); return 2; }
  cudaError_t e = cudaDeviceSynchronize();
  printf("%s: %s\n", k, cudaGetErrorString(e));
  return e != cudaSuccess;
}
