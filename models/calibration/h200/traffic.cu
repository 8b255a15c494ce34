// Kernels of microbench.py's `traffic` suite: the power of SMs that stay
// resident while the data they move, and the instructions they issue, fall
// from the streaming rate towards none (docs/calibration.md, "SMs that are
// resident but move little data"). Built by microbench.py with nvcc into a
// shared library and launched through ctypes on PyTorch's current stream.
//
// k_copy: a grid-stride float4 copy of n float4s, `reps` times over the same
//   buffers (an L2-resident buffer needs many passes per launch), each thread
//   waiting `sleep_ns` in __nanosleep after every float4 (0: none), which
//   throttles the rate while every CTA stays resident.
// k_scatter: out[idx[i]] += val[i] by atomicAdd over n random indices (the
//   scatter of a graph network's message passing).
#include <cuda_runtime.h>

extern "C" {

__global__ void k_copy(const float4* __restrict__ in, float4* __restrict__ out, long long n,
                       int reps, unsigned sleep_ns) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  const long long first = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (int r = 0; r < reps; ++r)
    for (long long i = first; i < n; i += stride) {
      out[i] = in[i];
      if (sleep_ns) __nanosleep(sleep_ns);
    }
}

__global__ void k_scatter(const int* __restrict__ idx, const float* __restrict__ val,
                          float* __restrict__ out, long long n) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    atomicAdd(out + idx[i], val[i]);
}

int launch_copy(int grid, int block, const void* in, void* out, long long n, int reps,
                unsigned sleep_ns, void* stream) {
  k_copy<<<grid, block, 0, static_cast<cudaStream_t>(stream)>>>(
      static_cast<const float4*>(in), static_cast<float4*>(out), n, reps, sleep_ns);
  return static_cast<int>(cudaGetLastError());
}

int launch_scatter(int grid, int block, const int* idx, const float* val, float* out, long long n,
                   void* stream) {
  k_scatter<<<grid, block, 0, static_cast<cudaStream_t>(stream)>>>(idx, val, out, n);
  return static_cast<int>(cudaGetLastError());
}

}  // extern "C"
