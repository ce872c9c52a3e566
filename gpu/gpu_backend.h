// Copyright 2026 The Sieve Authors.
//
// Entry point of the CUDA backend. Host-only header.

#ifndef SIEVE_GPU_GPU_BACKEND_H_
#define SIEVE_GPU_GPU_BACKEND_H_

#include <memory>

#include "query/executor.h"
#include "sieve/status.h"

namespace sieve::gpu {

// Creates the GPU executor on the current CUDA device. Unavailable when the build has no CUDA
// backend or no device can be used (the message says which).
Status CreateGpuExecutor(std::unique_ptr<Executor>* executor);

}  // namespace sieve::gpu

#endif  // SIEVE_GPU_GPU_BACKEND_H_
