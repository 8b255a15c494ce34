// Kernels of microbench.py's `occupancy` suite: the power of a GPU whose
// kernels occupy only some of its SMs (launch-bound steps run many kernels
// of a few CTAs). Built by microbench.py with nvcc into a shared library and
// launched through ctypes on PyTorch's current stream.
//
// k_sleep: each thread waits `cycles` SM clock cycles in __nanosleep steps
//   (an SM with resident warps but almost no instructions issued).
// k_ffma: each thread runs 16 independent FMA chains for `iters` iterations
//   (16 FFMA warp instructions per warp and iteration, plus the loop's few).
#include <cuda_runtime.h>

extern "C" {

__global__ void k_sleep(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) __nanosleep(256);
}

__global__ void k_ffma(float* out, int iters) {
  float a[16];
#pragma unroll
  for (int j = 0; j < 16; ++j) a[j] = static_cast<float>(threadIdx.x + j);
  const float m = 0.9999999f, c = 1e-7f;
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int j = 0; j < 16; ++j) a[j] = fmaf(a[j], m, c);
  }
  float s = 0.f;
#pragma unroll
  for (int j = 0; j < 16; ++j) s += a[j];
  if (s == 12345.678f) out[blockIdx.x] = s;  // keeps the chains alive
}

int launch_sleep(int grid, int block, long long cycles, void* stream) {
  k_sleep<<<grid, block, 0, static_cast<cudaStream_t>(stream)>>>(cycles);
  return static_cast<int>(cudaGetLastError());
}

int launch_ffma(int grid, int block, float* out, int iters, void* stream) {
  k_ffma<<<grid, block, 0, static_cast<cudaStream_t>(stream)>>>(out, iters);
  return static_cast<int>(cudaGetLastError());
}

}  // extern "C"
