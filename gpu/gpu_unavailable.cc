// Copyright 2026 The Sieve Authors.
//
// The GPU entry point of a build without the CUDA backend.

#include "gpu/gpu_backend.h"

#ifndef SIEVE_GPU_UNAVAILABLE_REASON
#define SIEVE_GPU_UNAVAILABLE_REASON "this build of Sieve has no CUDA backend"
#endif

namespace sieve::gpu {

Status CreateGpuExecutor(std::unique_ptr<Executor>* executor) {
  executor->reset();
  return Status::Unavailable(SIEVE_GPU_UNAVAILABLE_REASON);
}

}  // namespace sieve::gpu
