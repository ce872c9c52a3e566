// Copyright 2026 The Sieve Authors.
//
// CUDA error translation shared by the backend's translation units: a failed runtime call
// becomes a Status (ResourceExhausted when device memory ran out, Internal otherwise) naming
// the call.

#ifndef SIEVE_GPU_CUDA_UTIL_CUH_
#define SIEVE_GPU_CUDA_UTIL_CUH_

#include <cuda_runtime_api.h>

#include <string>

#include "sieve/status.h"

namespace sieve::gpu::detail {

inline Status FromCuda(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return Status::OK();
  std::string msg =
      std::string(what) + ": " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")";
  if (err == cudaErrorMemoryAllocation) return Status::ResourceExhausted(msg);
  return Status::Internal(msg);
}

}  // namespace sieve::gpu::detail

#define SIEVE_CUDA_TRY(call) SIEVE_RETURN_IF_ERROR(::sieve::gpu::detail::FromCuda((call), #call))
// After every kernel launch: launch-configuration errors and earlier asynchronous faults.
#define SIEVE_CUDA_CHECK_LAUNCH(name) \
  SIEVE_RETURN_IF_ERROR(::sieve::gpu::detail::FromCuda(cudaGetLastError(), "launch " name))

#endif  // SIEVE_GPU_CUDA_UTIL_CUH_
