// Copyright 2026 The Sieve Authors.
//
// The CUDA backend as the engine sees it: the one GPU header outside gpu/ and its tests and
// benchmarks. Host-only.

#ifndef SIEVE_GPU_GPU_BACKEND_H_
#define SIEVE_GPU_GPU_BACKEND_H_

#include <memory>

#include "query/executor.h"
#include "sieve/gpu_options.h"
#include "sieve/status.h"

namespace sieve::gpu {

// Creates the GPU executor on CUDA device options.device. InvalidArgument for options that do
// not Validate(); Unavailable when the build has no CUDA backend or no device can be used (the
// message says which).
Status CreateGpuExecutor(const GpuExecutorOptions& options, std::unique_ptr<Executor>* executor);

}  // namespace sieve::gpu

#endif  // SIEVE_GPU_GPU_BACKEND_H_
