// Copyright 2026 The Sieve Authors.
//
// Whether this build's kernels can run on the current device: they are built for one
// architecture (sm_90 by default), and a device of another one cannot load them.

#ifndef SIEVE_GPU_KERNEL_PROBE_CUH_
#define SIEVE_GPU_KERNEL_PROBE_CUH_

#include <cuda_runtime_api.h>

namespace sieve::gpu::detail {

// Launches an empty kernel on the current device and waits for it: cudaSuccess when it ran,
// else the error (no sticky error is left behind).
cudaError_t ProbeKernels();

}  // namespace sieve::gpu::detail

#endif  // SIEVE_GPU_KERNEL_PROBE_CUH_
