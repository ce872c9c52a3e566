// Copyright 2026 The Sieve Authors.
//
// The GPU entry point of a build without the CUDA backend.

#include "gpu/gpu_backend.h"

namespace sieve::gpu {

Status CreateGpuExecutor(std::unique_ptr<Executor>* executor) {
  executor->reset();
  return Status::Unavailable("this build of Sieve has no CUDA backend (nvcc was not found)");
}

}  // namespace sieve::gpu
