// Copyright 2026 The Sieve Authors.

#include "gpu/kernel_probe.cuh"

#include <cuda_runtime.h>

namespace sieve::gpu::detail {

__global__ void NoopKernel() {}

cudaError_t ProbeKernels() {
  NoopKernel<<<1, 1>>>();
  cudaError_t err = cudaDeviceSynchronize();
  if (err == cudaSuccess) err = cudaGetLastError();
  if (err != cudaSuccess) (void)cudaGetLastError();
  return err;
}

}  // namespace sieve::gpu::detail
